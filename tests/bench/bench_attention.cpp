// Decode attention over a deep KV cache, contiguous against paged, at TinyLlama's shape (8 query
// heads per KV head, head_dim 64, rows of 4 KV heads) for each KV type:
//   Attention/<kv type>/contiguous/n_kv:N   rows in position order, no block table
//   Attention/<kv type>/paged:B/n_kv:N      the same rows read through a table of blocks of B
//                                           positions, in order (what one sequence gets from
//                                           the pool, which hands out the lowest block first)
//   Attention/<kv type>/scattered:B/n_kv:N  through a shuffled table (a pool after much churn)
//   Prompt/<kv type>/paged:B/tokens:T/n_kv:N  T consecutive prompt tokens at depth N in one call
//                                           (attention_tokens: their queries share each decoded
//                                           K/V tile); items_per_second = tokens/s, to compare
//                                           with tokens:1 (a token alone, as in decode)
// One KV head of one layer per iteration: the ratio of paged to contiguous time is the cost of
// reading through the table. Usage: bench_attention [google-benchmark flags]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/kv_quant.h"
#include "kernels/formats/kv_type.h"

namespace {

using namespace inferscope::kernels;

constexpr int64_t kHeadDim = 64, kKvHeads = 4, kQueriesPerKv = 8;
constexpr int64_t kRowValues = kHeadDim * kKvHeads;

enum class Layout { Contiguous, Paged, Scattered };

// n_kv rows of random values of `type`, in blocks of `block_size` rows when paged.
struct Cache {
  std::vector<uint8_t> k, v;
  std::vector<int32_t> blocks;
  int64_t row_bytes = 0;
};

Cache make_cache(KvType type, int64_t n_kv, Layout layout, int block_shift) {
  Cache c;
  c.row_bytes = kv_row_bytes(type, kRowValues);
  const int64_t block = int64_t{1} << block_shift;
  const int64_t n_blocks = (n_kv + block - 1) / block;
  const int64_t rows = layout == Layout::Contiguous ? n_kv : n_blocks * block;
  c.k.resize(static_cast<size_t>(rows * c.row_bytes));
  c.v.resize(c.k.size());
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(kRowValues);
  for (int64_t r = 0; r < rows; ++r) {
    for (std::vector<uint8_t>* buffer : {&c.k, &c.v}) {
      for (float& x : values) x = normal(rng);
      kv_quantize_row(type, values.data(), buffer->data() + r * c.row_bytes, kRowValues);
    }
  }
  if (layout != Layout::Contiguous) {
    c.blocks.resize(static_cast<size_t>(n_blocks));
    std::iota(c.blocks.begin(), c.blocks.end(), 0);
    if (layout == Layout::Scattered) std::shuffle(c.blocks.begin(), c.blocks.end(), rng);
  }
  return c;
}

void BM_Attention(benchmark::State& state, KvType type, Layout layout, int block_shift) {
  const int64_t n_kv = state.range(0);
  const Cache cache = make_cache(type, n_kv, layout, block_shift);
  const int32_t* table = cache.blocks.empty() ? nullptr : cache.blocks.data();
  const KvRows k{type, cache.k.data(), cache.row_bytes, 0, table, block_shift};
  const KvRows v{type, cache.v.data(), cache.row_bytes, 0, table, block_shift};
  std::vector<float> q(static_cast<size_t>(kQueriesPerKv * kHeadDim), 0.1f);
  std::vector<float> out(q.size());
  std::vector<float> scores(static_cast<size_t>(attention_scratch_floats(n_kv, kHeadDim)));
  for (auto _ : state) {
    attention_group(q.data(), kHeadDim, kQueriesPerKv, k, v, n_kv, kHeadDim, 0.125f, 0.0f, scores.data(), out.data(),
                    kHeadDim);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 2 * n_kv *
                          kv_row_bytes(type, kHeadDim));
}

void BM_Prompt(benchmark::State& state, KvType type, int block_shift) {
  const int64_t n_tok = state.range(0), n_kv = state.range(1);
  const Cache cache = make_cache(type, n_kv, Layout::Paged, block_shift);
  const KvRows k{type, cache.k.data(), cache.row_bytes, 0, cache.blocks.data(), block_shift};
  const KvRows v{type, cache.v.data(), cache.row_bytes, 0, cache.blocks.data(), block_shift};
  std::vector<float> q(static_cast<size_t>(n_tok * kQueriesPerKv * kHeadDim), 0.1f);
  std::vector<float> out(q.size());
  std::vector<int64_t> seen(static_cast<size_t>(n_tok));
  for (int64_t j = 0; j < n_tok; ++j) seen[static_cast<size_t>(j)] = n_kv - n_tok + 1 + j;  // causal
  std::vector<float> scratch(static_cast<size_t>(attention_scratch_floats(n_kv, kHeadDim)));
  const int64_t token_stride = kQueriesPerKv * kHeadDim;
  const AttentionQueries a{q.data(), kHeadDim, token_stride, kQueriesPerKv, n_tok, seen.data(), out.data(), kHeadDim,
                           token_stride};
  for (auto _ : state) {
    attention_tokens(a, k, v, kHeadDim, 0.125f, 0.0f, scratch.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * n_tok);
}

void register_all() {
  constexpr int kBlockShift = 4;  // the default block size, 16
  for (KvType type : {KvType::F16, KvType::Q8_0, KvType::Q4_0, KvType::NF4}) {
    const std::string tn(kv_type_name(type));
    const std::string block = std::to_string(1 << kBlockShift);
    const std::pair<Layout, std::string> layouts[] = {{Layout::Contiguous, "contiguous"},
                                                      {Layout::Paged, "paged:" + block},
                                                      {Layout::Scattered, "scattered:" + block}};
    for (const auto& [layout, name] : layouts) {
      benchmark::RegisterBenchmark(("Attention/" + tn + "/" + name).c_str(), BM_Attention, type, layout, kBlockShift)
          ->Arg(3000)
          ->ArgName("n_kv")
          ->Unit(benchmark::kMicrosecond);
    }
    benchmark::RegisterBenchmark(("Prompt/" + tn + "/paged:" + block).c_str(), BM_Prompt, type, kBlockShift)
        ->ArgsProduct({{1, 4, 8}, {3000}})
        ->ArgNames({"tokens", "n_kv"})
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
