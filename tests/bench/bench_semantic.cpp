// Semantic-cache lookup latency: brute force (exact) against HNSW at 1k, 10k, 100k and 1M
// cached vectors of 384 dimensions (the size of MiniLM-class sentence embeddings), top-4 per
// lookup as SemanticCache asks for. Vectors are random unit vectors.
//   BruteForce/n:N          one exact search (latency does not depend on the query)
//   Hnsw/near/n:N           queries at cosine 0.95 from a stored vector: the case that can hit
//   Hnsw/random/n:N         uniformly random queries: a miss whatever the index answers
// Counters: build_s (HNSW graph, default HnswParams, one thread), recall_near / recall_random
// (share of 200 queries whose top-1 equals brute force's).
// Usage: bench_semantic [--skip_hnsw_1m] [--benchmark_filter=...]
// Each graph is built once per process, before its first benchmark. On the 2-core build machine
// 100k takes about 4 minutes and 1M about an hour: --skip_hnsw_1m leaves the 1M graph out.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "engine/semantic/brute_force_index.h"
#include "engine/semantic/hnsw_index.h"
#include "engine/semantic/unit_vector.h"
#include "kernels/cpu/cpu_features.h"

namespace {

using namespace inferscope::semantic;

constexpr std::size_t kDim = 384;
constexpr std::size_t kCandidates = 4;
constexpr std::size_t kQueries = 200;
constexpr double kNearCosine = 0.95;

bool g_skip_hnsw_1m = false;

std::vector<float> random_unit(std::mt19937& rng) {
  std::normal_distribution<float> normal;
  std::vector<float> v(kDim);
  for (float& x : v) x = normal(rng);
  return to_unit_vector(v).value();
}

// Stored vector i, the same in every run, without keeping a second copy of a million of them.
std::vector<float> stored_vector(std::size_t i) {
  std::mt19937 rng(static_cast<unsigned>(i * 2654435761u + 1));
  return random_unit(rng);
}

std::vector<float> near(const std::vector<float>& from, std::mt19937& rng) {
  std::vector<float> other = random_unit(rng);
  double along = 0.0;
  for (std::size_t i = 0; i < kDim; ++i) along += static_cast<double>(other[i]) * from[i];
  for (std::size_t i = 0; i < kDim; ++i) other[i] -= static_cast<float>(along * from[i]);
  other = to_unit_vector(other).value();
  const double side = std::sqrt(1.0 - kNearCosine * kNearCosine);
  for (std::size_t i = 0; i < kDim; ++i) other[i] = static_cast<float>(kNearCosine * from[i] + side * other[i]);
  return to_unit_vector(other).value();
}

struct Corpus {
  std::unique_ptr<BruteForceIndex> exact;
  std::unique_ptr<HnswIndex> graph;
  double build_s = 0.0;
  double recall_near = 0.0, recall_random = 0.0;
  std::vector<std::vector<float>> near_queries, random_queries;
};

double recall(const Corpus& c, const std::vector<std::vector<float>>& queries) {
  std::size_t agreed = 0;
  for (const auto& q : queries) agreed += c.graph->search(q, 1)->front().id == c.exact->search(q, 1)->front().id;
  return static_cast<double>(agreed) / static_cast<double>(queries.size());
}

void build_graph(Corpus& c, std::size_t n) {
  const auto start = std::chrono::steady_clock::now();
  c.graph = std::move(HnswIndex::create(kDim, HnswParams{}, n).value());
  c.exact->for_each([&](std::int64_t id, std::span<const float> v) { (void)c.graph->add(id, v); });
  c.build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  c.recall_near = recall(c, c.near_queries);
  c.recall_random = recall(c, c.random_queries);
  std::fprintf(stderr, "HNSW %zu x %zu: built in %.1f s, recall@1 near %.3f, random %.3f\n", n, kDim, c.build_s,
               c.recall_near, c.recall_random);
}

Corpus& corpus(std::size_t n, bool with_graph) {
  static std::map<std::size_t, Corpus> built;
  Corpus& c = built[n];
  if (!c.exact) {
    c.exact = std::make_unique<BruteForceIndex>(kDim);
    for (std::size_t i = 0; i < n; ++i) (void)c.exact->add(static_cast<std::int64_t>(i), stored_vector(i));
    std::mt19937 rng(static_cast<unsigned>(n));
    for (std::size_t q = 0; q < kQueries; ++q) {
      c.near_queries.push_back(near(stored_vector(rng() % n), rng));
      c.random_queries.push_back(random_unit(rng));
    }
  }
  if (with_graph && !c.graph) build_graph(c, n);
  return c;
}

void BM_BruteForce(benchmark::State& state) {
  Corpus& c = corpus(static_cast<std::size_t>(state.range(0)), false);
  std::size_t q = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(c.exact->search(c.near_queries[q++ % kQueries], kCandidates));
  }
}

void BM_Hnsw(benchmark::State& state, bool near_queries) {
  Corpus& c = corpus(static_cast<std::size_t>(state.range(0)), true);
  const auto& queries = near_queries ? c.near_queries : c.random_queries;
  std::size_t q = 0;
  for (auto _ : state) benchmark::DoNotOptimize(c.graph->search(queries[q++ % kQueries], kCandidates));
  state.counters["build_s"] = c.build_s;
  state.counters["recall"] = near_queries ? c.recall_near : c.recall_random;
}

void register_all() {
  for (std::int64_t n : {1'000, 10'000, 100'000, 1'000'000}) {
    benchmark::RegisterBenchmark("BruteForce", BM_BruteForce)->Arg(n)->ArgName("n")->Unit(benchmark::kMicrosecond);
    if (n == 1'000'000 && g_skip_hnsw_1m) continue;
    benchmark::RegisterBenchmark("Hnsw/near", BM_Hnsw, true)->Arg(n)->ArgName("n")->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("Hnsw/random", BM_Hnsw, false)->Arg(n)->ArgName("n")->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--skip_hnsw_1m") == 0) {
      g_skip_hnsw_1m = true;
      for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
      --argc;
      break;
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  std::printf("CPU level: %s; %zu dims, top-%zu per lookup\n",
              inferscope::kernels::simd_level_name(inferscope::kernels::detected_simd_level()), kDim, kCandidates);
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
