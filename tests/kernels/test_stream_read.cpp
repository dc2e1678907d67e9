// The streaming-read kernel sums correctly at every level, and the bandwidth probe reports a
// plausible figure.
#include <gtest/gtest.h>

#include <vector>

#include "engine/core/thread_pool.h"
#include "engine/metrics/memory_bandwidth.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/stream_read.h"

namespace inferscope::kernels {
namespace {

TEST(StreamRead, SumsAtEveryLevel) {
  std::vector<float> v(1000 + 37);
  double expected = 0.0;
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<float>(i % 13) - 6.0f;
    expected += v[i];
  }
  for (SimdLevel l : {SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512}) {
    set_simd_level(l);
    EXPECT_EQ(stream_sum(v.data(), v.size()), expected) << simd_level_name(l);
    EXPECT_EQ(stream_sum(v.data() + 1, 5), -15.0f) << simd_level_name(l);  // -5 -4 -3 -2 -1
  }
  set_simd_level(detected_simd_level());
}

TEST(MemoryBandwidth, ReportsAPlausibleRate) {
  ThreadPool pool(2);
  const double bw = measure_read_bandwidth(pool, size_t{32} << 20, 2);
  EXPECT_GT(bw, 0.5e9);   // any machine this runs on reads faster than 0.5 GB/s
  EXPECT_LT(bw, 2000e9);  // and slower than 2 TB/s
}

}  // namespace
}  // namespace inferscope::kernels
