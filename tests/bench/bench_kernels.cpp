// Matmul throughput at the shapes of a 1.1B llama model (TinyLlama: n_embd 2048, n_ff 5632,
// 22 layers, 4 KV heads of 64, vocabulary 32000), per weight type and SIMD level:
//   Decode/<type>/<level>/threads:N   one token through all 155 matmuls of the model (weights
//                                     streamed from memory): GB/s of weights, fraction of the
//                                     measured read bandwidth, tokens/s (matmuls only)
//   Prefill/<type>/<level>/threads:N  128 tokens through all matmuls: GFLOP/s, tokens/s
//   Matmul/<type>/<level>/<rows>x<k>/n:<tokens>/threads:N   one matrix (cache-resident; n 1, 4
//                                     (four sequences decoding together) and 128)
//   PoolDispatch/threads:N            latency of one empty ThreadPool::run
// Usage: bench_kernels [--small_pages] [--benchmark_filter=Decode/q4_0] [google-benchmark flags]
// Weights live in transparent huge pages unless --small_pages (4 KiB pages, as a plain mmap of a
// model file gets); the decode bound is measured with the same kind of pages.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <sys/mman.h>

#include "engine/core/thread_pool.h"
#include "engine/metrics/memory_bandwidth.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quantize.h"

namespace {

using inferscope::ThreadPool;
using namespace inferscope::kernels;

constexpr int64_t kEmbd = 2048, kFf = 5632, kKv = 256, kVocab = 32000, kLayers = 22, kPrefill = 128;

struct Shape {
  int64_t rows, k;
};

// The matmuls of one layer, in forward order, then the output head.
const Shape kLayerShapes[] = {{kEmbd, kEmbd}, {kKv, kEmbd}, {kKv, kEmbd}, {kEmbd, kEmbd},
                              {kFf, kEmbd},   {kFf, kEmbd}, {kEmbd, kFf}};
const Shape kOutputShape = {kVocab, kEmbd};

bool g_huge_pages = true;

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<uint8_t, FreeDeleter>;

Buffer alloc_bytes(size_t n) {
  constexpr size_t kHuge = size_t{2} << 20;
  n = (n + kHuge - 1) / kHuge * kHuge;
  void* p = std::aligned_alloc(kHuge, n);
  if (!p) {
    std::fprintf(stderr, "out of memory (%zu bytes)\n", n);
    std::exit(1);
  }
  if (g_huge_pages) madvise(p, n, MADV_HUGEPAGE);
  return Buffer(static_cast<uint8_t*>(p));
}

// Fills `n` bytes of weights of `type` by tiling 1 MiB of properly quantized random rows
// (valid scales, no NaN/denormals that would distort timings).
void fill_weights(GgmlType type, uint8_t* dst, size_t n) {
  static std::map<GgmlType, std::vector<uint8_t>> tiles;
  std::vector<uint8_t>& tile = tiles[type];
  if (tile.empty()) {
    const int64_t k = 2048;
    const int64_t rb = row_bytes(type, k);
    const int64_t rows = std::max<int64_t>(1, (int64_t{1} << 20) / rb);
    tile.resize(static_cast<size_t>(rows * rb));
    std::mt19937 rng(1);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::vector<float> row(static_cast<size_t>(k));
    for (int64_t r = 0; r < rows; ++r) {
      for (float& v : row) v = normal(rng);
      quantize_row(type, row.data(), tile.data() + r * rb, k);
    }
  }
  for (size_t off = 0; off < n; off += tile.size()) std::memcpy(dst + off, tile.data(), std::min(tile.size(), n - off));
}

struct Matrix {
  Shape shape;
  const uint8_t* data;
};

// All weights of the model for one type, allocated on first use (only one type at a time).
struct Model {
  GgmlType type = GgmlType::F32;
  Buffer storage;
  std::vector<Matrix> matrices;
  size_t bytes = 0;
};

Model& model_for(GgmlType type) {
  static Model m;
  if (m.storage && m.type == type) return m;
  m = Model();
  m.type = type;
  std::vector<Shape> shapes;
  for (int l = 0; l < kLayers; ++l) shapes.insert(shapes.end(), std::begin(kLayerShapes), std::end(kLayerShapes));
  shapes.push_back(kOutputShape);
  size_t total = 0;
  for (const Shape& s : shapes) total += static_cast<size_t>(row_bytes(type, s.k) * s.rows + 4096) / 4096 * 4096;
  m.storage = alloc_bytes(total);
  fill_weights(type, m.storage.get(), total);
  size_t off = 0;
  for (const Shape& s : shapes) {
    m.matrices.push_back({s, m.storage.get() + off});
    off += static_cast<size_t>(row_bytes(type, s.k) * s.rows + 4096) / 4096 * 4096;
  }
  m.bytes = total;
  return m;
}

ThreadPool& pool_of(int n_threads) {
  static std::unique_ptr<ThreadPool> pools[9];
  auto& p = pools[n_threads];
  if (!p) p = std::make_unique<ThreadPool>(n_threads);
  return *p;
}

// Rows split in multiples of 32 so that no thread gets a partial prefill panel.
std::pair<int64_t, int64_t> row_range(int64_t rows, int ith, int nth) {
  const int64_t chunks = (rows + 31) / 32;
  const int64_t begin = chunks * ith / nth * 32, end = chunks * (ith + 1) / nth * 32;
  return {std::min(begin, rows), std::min(end, rows)};
}

struct Scratch {
  Buffer x, packed, y;
  size_t x_bytes = 0, packed_bytes = 0, y_bytes = 0;
  void ensure(GgmlType type, int64_t n_tokens) {
    const size_t xb = static_cast<size_t>(kFf * n_tokens) * 4;
    const size_t pb = packed_activation_bytes(type, kFf, n_tokens);
    const size_t yb = static_cast<size_t>(kVocab * n_tokens) * 4;
    if (xb > x_bytes) {
      x = alloc_bytes(xb);
      x_bytes = xb;
      std::mt19937 rng(2);
      std::normal_distribution<float> normal(0.0f, 1.0f);
      auto* f = reinterpret_cast<float*>(x.get());
      for (size_t i = 0; i < xb / 4; ++i) f[i] = normal(rng);
    }
    if (pb > packed_bytes) {
      packed = alloc_bytes(pb);
      packed_bytes = pb;
    }
    if (yb > y_bytes) {
      y = alloc_bytes(yb);
      y_bytes = yb;
    }
  }
};

Scratch& scratch() {
  static Scratch s;
  return s;
}

// One product as the engine runs it: pack (threads split tokens when there are many), then
// threads split the rows.
void run_matmul(ThreadPool& pool, GgmlType type, const Matrix& m, int64_t n_tokens) {
  Scratch& s = scratch();
  const auto* x = reinterpret_cast<const float*>(s.x.get());
  void* packed = s.packed.get();
  auto* y = reinterpret_cast<float*>(s.y.get());
  const int64_t k = m.shape.k, rows = m.shape.rows;
  if (n_tokens < 4) {
    pack_activations(type, x, k, n_tokens, packed, 0, n_tokens);
  } else {
    pool.run([&](int ith, int nth) {
      const int64_t t0 = n_tokens * ith / nth, t1 = n_tokens * (ith + 1) / nth;
      if (t0 < t1) pack_activations(type, x, k, n_tokens, packed, t0, t1);
    });
  }
  pool.run([&](int ith, int nth) {
    const auto [r0, r1] = row_range(rows, ith, nth);
    if (r0 < r1) matmul_rows(type, m.data, k, packed, n_tokens, y, rows, r0, r1);
  });
}

void BM_Model(benchmark::State& state, GgmlType type, SimdLevel level, int64_t n_tokens) {
  const int n_threads = static_cast<int>(state.range(0));
  set_simd_level(level);
  Model& model = model_for(type);
  scratch().ensure(type, n_tokens);
  ThreadPool& pool = pool_of(n_threads);
  // The machine may be shared: measure the bound right before, with the same threads.
  const double bandwidth =
      n_tokens == 1 ? inferscope::measure_read_bandwidth(pool, size_t{256} << 20, 3, g_huge_pages) : 0.0;
  double flops = 0.0;
  for (const Matrix& m : model.matrices) flops += 2.0 * static_cast<double>(m.shape.rows * m.shape.k * n_tokens);
  for (auto _ : state) {
    for (const Matrix& m : model.matrices) run_matmul(pool, type, m, n_tokens);
    benchmark::ClobberMemory();
  }
  const double iters = static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(static_cast<double>(model.bytes) * iters));
  state.counters["tok/s"] = benchmark::Counter(static_cast<double>(n_tokens) * iters, benchmark::Counter::kIsRate);
  state.counters["GFLOP/s"] = benchmark::Counter(flops * iters / 1e9, benchmark::Counter::kIsRate);
  if (bandwidth > 0) {
    // Fraction of the streaming-read bandwidth measured just before (the decode bound).
    state.counters["bw_GB/s"] = bandwidth / 1e9;
    state.counters["of_bw"] = benchmark::Counter(static_cast<double>(model.bytes) * iters / bandwidth,
                                                 benchmark::Counter::kIsRate);
  }
  set_simd_level(detected_simd_level());
}

void BM_Matmul(benchmark::State& state, GgmlType type, SimdLevel level, Shape shape) {
  const int64_t n_tokens = state.range(0);
  const int n_threads = static_cast<int>(state.range(1));
  set_simd_level(level);
  const size_t bytes = static_cast<size_t>(row_bytes(type, shape.k) * shape.rows);
  Buffer w = alloc_bytes(bytes);
  fill_weights(type, w.get(), bytes);
  scratch().ensure(type, n_tokens);
  ThreadPool& pool = pool_of(n_threads);
  const Matrix m{shape, w.get()};
  for (auto _ : state) {
    run_matmul(pool, type, m, n_tokens);
    benchmark::ClobberMemory();
  }
  const double iters = static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(static_cast<double>(bytes) * iters));
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * static_cast<double>(shape.rows * shape.k * n_tokens) * iters / 1e9, benchmark::Counter::kIsRate);
  set_simd_level(detected_simd_level());
}

void BM_PoolDispatch(benchmark::State& state) {
  ThreadPool& pool = pool_of(static_cast<int>(state.range(0)));
  std::atomic<int> sink{0};
  for (auto _ : state) pool.run([&](int ith, int) { if (ith < 0) sink.fetch_add(1); });
}

void register_all() {
  const GgmlType types[] = {GgmlType::Q4_0, GgmlType::Q8_0,   GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1,
                            GgmlType::IQ4_NL, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::Q3_K,
                            GgmlType::Q2_K,   GgmlType::TQ2_0, GgmlType::TQ1_0, GgmlType::F16, GgmlType::BF16,
                            GgmlType::F16_2OF4, GgmlType::F32};
  std::vector<SimdLevel> levels;
  for (SimdLevel l : {SimdLevel::Avx2, SimdLevel::Avx512, SimdLevel::Amx}) {
    if (static_cast<int>(l) <= static_cast<int>(detected_simd_level())) levels.push_back(l);
  }
  benchmark::RegisterBenchmark("PoolDispatch", BM_PoolDispatch)->Arg(1)->Arg(2)->UseRealTime();
  for (GgmlType type : types) {
    const std::string tn = type_name(type);
    for (SimdLevel level : levels) {
      const std::string ln = simd_level_name(level);
      if (type != GgmlType::F32) {  // the F32 model (4.4 GB) is left out of the whole-model runs
        benchmark::RegisterBenchmark(("Decode/" + tn + "/" + ln).c_str(), BM_Model, type, level, int64_t{1})
            ->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
        benchmark::RegisterBenchmark(("Prefill/" + tn + "/" + ln).c_str(), BM_Model, type, level, kPrefill)
            ->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
      }
      for (const Shape& s : {Shape{kEmbd, kEmbd}, Shape{kKv, kEmbd}, Shape{kFf, kEmbd}, Shape{kEmbd, kFf}, kOutputShape}) {
        const std::string name = "Matmul/" + tn + "/" + ln + "/" + std::to_string(s.rows) + "x" + std::to_string(s.k);
        benchmark::RegisterBenchmark(name.c_str(), BM_Matmul, type, level, s)
            ->ArgsProduct({{1, 4, kPrefill}, {1, 2}})
            ->ArgNames({"n", "threads"})
            ->UseRealTime()
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--small_pages") == 0) {
      g_huge_pages = false;
      for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
      --argc;
      break;
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  std::printf("CPU level: %s; weights in %s pages; read bandwidth: %.2f GB/s (1 thread), %.2f GB/s (2 threads)\n",
              simd_level_name(detected_simd_level()), g_huge_pages ? "huge" : "4 KiB",
              inferscope::measure_read_bandwidth(pool_of(1), size_t{256} << 20, 5, g_huge_pages) / 1e9,
              inferscope::measure_read_bandwidth(pool_of(2), size_t{256} << 20, 5, g_huge_pages) / 1e9);
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
