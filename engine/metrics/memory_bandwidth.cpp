// Streaming-read bandwidth probe (see header).
#include "engine/metrics/memory_bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "kernels/cpu/stream_read.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace inferscope {

double measure_read_bandwidth(ThreadPool& pool, size_t bytes, int passes, bool huge_pages) {
  constexpr size_t kHuge = size_t{2} << 20;
  bytes = std::max<size_t>((bytes + kHuge - 1) / kHuge * kHuge, kHuge);
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> buffer(static_cast<float*>(std::aligned_alloc(kHuge, bytes)));
  if (!buffer) return 0.0;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Before the first touch, so the pages are faulted in as huge pages where the kernel allows.
  if (huge_pages) ::madvise(buffer.get(), bytes, MADV_HUGEPAGE);
#else
  (void)huge_pages;
#endif
  const size_t n = bytes / sizeof(float);
  const int nth = pool.size();
  // Each thread touches its own part first so the pages are really backed (and, on NUMA, local).
  auto range = [n](int ith, int nth_) {
    const size_t per = (n / static_cast<size_t>(nth_) + 15) / 16 * 16;
    const size_t begin = std::min(n, per * static_cast<size_t>(ith));
    return std::make_pair(begin, std::min(n, begin + per));
  };
  float* data = buffer.get();
  pool.run([&](int ith, int nth_) {
    auto [b, e] = range(ith, nth_);
    for (size_t i = b; i < e; ++i) data[i] = 1.0f;
  });
  std::vector<float> sinks(static_cast<size_t>(nth), 0.0f);
  double best = 0.0;
  for (int pass = 0; pass <= std::max(passes, 1); ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    pool.run([&](int ith, int nth_) {
      auto [b, e] = range(ith, nth_);
      sinks[static_cast<size_t>(ith)] += kernels::stream_sum(data + b, e - b);
    });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (pass > 0 && seconds > 0) best = std::max(best, static_cast<double>(bytes) / seconds);
  }
  // Keep the sums observable so the reads cannot be optimized away.
  volatile float sink = 0.0f;
  for (float s : sinks) sink = sink + s;
  (void)sink;
  return best;
}

}  // namespace inferscope
