// Batch-invariant products (TokenBatching::Invariant): every token's outputs are bit-identical
// to a product of that token alone, for every weight type the kernels multiply, at every SIMD
// level of this CPU, for token counts on both sides of the panel thresholds (and past the 16
// tokens the decode kernels regroup at a time), over whole and split row ranges. Speculative
// verification relies on it: its logits must be plain decoding's to the last bit. (The fastest
// kernels differ in the last bits from 4-6 tokens on, which is why the mode exists; that is
// checked by the model tests failing without it, not asserted here.)
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/matmul.h"
#include "tests/support/matmul_problem.h"
#include "tests/support/simd_levels.h"

namespace inferscope::kernels {
namespace {

constexpr GgmlType kTypes[] = {GgmlType::F32,  GgmlType::F16,    GgmlType::BF16,  GgmlType::F16_2OF4, GgmlType::Q8_0,
                               GgmlType::Q4_0, GgmlType::Q4_1,   GgmlType::Q5_0,  GgmlType::Q5_1,     GgmlType::IQ4_NL,
                               GgmlType::Q2_K, GgmlType::Q3_K,   GgmlType::Q4_K,  GgmlType::Q5_K,     GgmlType::Q6_K,
                               GgmlType::TQ1_0, GgmlType::TQ2_0};

constexpr int64_t kRows = 150;  // not a multiple of any row tile

// y[t][r] of token t alone: packed by itself, one-token product.
std::vector<float> one_token_outputs(const testing::MatmulProblem& p, int64_t t) {
  std::vector<uint8_t> packed(packed_activation_bytes(p.type, p.k, 1));
  pack_activations(p.type, p.x.data() + t * p.k, p.k, 1, packed.data(), 0, 1);
  std::vector<float> y(static_cast<size_t>(p.rows));
  matmul_rows(p.type, p.weights.data(), p.k, packed.data(), 1, y.data(), p.rows, 0, p.rows);
  return y;
}

// The batch-invariant product of all tokens, its rows in one range or in two (as two threads).
std::vector<float> invariant_outputs(const testing::MatmulProblem& p, int64_t split) {
  std::vector<float> y(static_cast<size_t>(p.rows * p.n_tokens));
  for (auto [r0, r1] : {std::pair<int64_t, int64_t>{0, split}, {split, p.rows}}) {
    matmul_rows(p.type, p.weights.data(), p.k, p.packed.data(), p.n_tokens, y.data(), p.rows, r0, r1,
                TokenBatching::Invariant);
  }
  return y;
}

// Rows of k values of `type` times n tokens: every token of the batch-invariant product equals
// its product alone, at every level and row split.
void check_invariance(GgmlType type, int64_t k) {
  for (int64_t n : {2, 5, 6, 9, 17, 20}) {
    testing::MatmulProblem p{type, k, kRows, n, {}, {}, {}, {}};
    std::mt19937 rng(static_cast<uint32_t>(n * 131 + static_cast<int>(type)));
    p.weights = testing::random_quantized_rows(type, k, kRows, rng, 7, 3, 32);
    p.x = testing::random_activations(k, n, rng);
    testing::decode_and_pack(p);
    for (SimdLevel level : testing::vector_simd_levels()) {
      set_simd_level(level);
      for (int64_t split : {kRows, int64_t{77}}) {
        const std::vector<float> all = invariant_outputs(p, split);
        for (int64_t t = 0; t < n; ++t) {
          const std::vector<float> alone = one_token_outputs(p, t);
          ASSERT_EQ(std::memcmp(all.data() + t * kRows, alone.data(), alone.size() * sizeof(float)), 0)
              << type_name(type) << " k=" << k << " at " << simd_level_name(level) << ": token " << t << " of " << n
              << ", rows split at " << split;
        }
      }
    }
  }
}

TEST(MatmulBatchInvariant, EveryTokenComputesAsIfAlone) {
  testing::SimdLevelGuard guard;
  for (GgmlType type : kTypes) {
    ASSERT_TRUE(matmul_supported(type)) << type_name(type);
    check_invariance(type, 512);  // a multiple of every block size
  }
}

TEST(MatmulBatchInvariant, FloatRowsWithATailComputeAsIfAlone) {
  testing::SimdLevelGuard guard;
  for (GgmlType type : {GgmlType::F32, GgmlType::F16, GgmlType::BF16}) check_invariance(type, 172);  // 172 = 10 x 16 + 12
}

}  // namespace
}  // namespace inferscope::kernels
