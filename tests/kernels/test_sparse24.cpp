// F16_2OF4 (2:4 sparse F16): the compressed rows round-trip a 2:4-pruned row exactly (up to F16),
// keep the two largest of every four, and the matmul kernels (scalar, AVX2, AVX-512) equal the
// dense product of the pruned matrix.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/dequantize.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cpu/sparse24.h"
#include "kernels/formats/fp16.h"

namespace inferscope::kernels {
namespace {

std::vector<float> random_values(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = dist(rng);
  return x;
}

TEST(Sparse24, KeepsTheTwoLargestOfEveryFourAndRoundTrips) {
  const int64_t n = 64;
  const std::vector<float> x = random_values(n, 1);
  std::vector<uint8_t> bytes(static_cast<size_t>(row_bytes(GgmlType::F16_2OF4, n)));
  ASSERT_EQ(bytes.size(), 72u);  // 36 bytes per 32 weights
  ASSERT_TRUE(quantize_row(GgmlType::F16_2OF4, x.data(), bytes.data(), n));
  std::vector<float> back(static_cast<size_t>(n));
  ASSERT_TRUE(dequantize_row(GgmlType::F16_2OF4, bytes.data(), back.data(), n));
  for (int64_t g = 0; g < n / 4; ++g) {
    int kept = 0;
    for (int i = 0; i < 4; ++i) {
      const float v = back[static_cast<size_t>(4 * g + i)];
      if (v == 0.0f) continue;
      ++kept;
      EXPECT_EQ(v, round_to_fp16(x[static_cast<size_t>(4 * g + i)]));
      int larger = 0;  // no dropped weight of the group is larger
      for (int j = 0; j < 4; ++j) {
        if (back[static_cast<size_t>(4 * g + j)] == 0.0f && std::fabs(x[4 * g + j]) > std::fabs(x[4 * g + i])) ++larger;
      }
      EXPECT_EQ(larger, 0) << "group " << g;
    }
    EXPECT_EQ(kept, 2) << "group " << g;
  }
  // A row that is 2:4 already comes back unchanged (F16 values).
  std::vector<uint8_t> again(bytes.size());
  ASSERT_TRUE(quantize_row(GgmlType::F16_2OF4, back.data(), again.data(), n));
  EXPECT_EQ(again, bytes);
}

TEST(Sparse24, MatmulEqualsTheDenseProductOfThePrunedMatrix) {
  const int64_t k = 256, rows = 13, tokens = 7;  // remainders of the row and token tiles
  std::vector<uint8_t> w(static_cast<size_t>(rows * row_bytes(GgmlType::F16_2OF4, k)));
  std::vector<float> dense(static_cast<size_t>(rows * k));
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<float> row = random_values(k, 10 + static_cast<uint32_t>(r));
    uint8_t* dst = w.data() + r * row_bytes(GgmlType::F16_2OF4, k);
    quantize_row(GgmlType::F16_2OF4, row.data(), dst, k);
    dequantize_row(GgmlType::F16_2OF4, dst, dense.data() + r * k, k);
  }
  const std::vector<float> x = random_values(tokens * k, 99);
  ASSERT_TRUE(matmul_supported(GgmlType::F16_2OF4));
  std::vector<uint8_t> packed(packed_activation_bytes(GgmlType::F16_2OF4, k, tokens));
  pack_activations(GgmlType::F16_2OF4, x.data(), k, tokens, packed.data(), 0, tokens);
  auto want = [&](int64_t t, int64_t r) {
    double sum = 0;
    for (int64_t i = 0; i < k; ++i) sum += static_cast<double>(dense[r * k + i]) * x[t * k + i];
    return sum;
  };
  std::vector<float> ref(static_cast<size_t>(tokens * rows));
  matmul_rows_reference(GgmlType::F16_2OF4, w.data(), k, packed.data(), tokens, ref.data(), rows, 0, rows);
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t r = 0; r < rows; ++r) EXPECT_NEAR(ref[t * rows + r], want(t, r), 1e-4 * (1 + std::fabs(want(t, r))));
  }
  for (SimdLevel level : {SimdLevel::Avx2, SimdLevel::Avx512}) {
    if (static_cast<int>(level) > static_cast<int>(detected_simd_level())) continue;
    set_simd_level(level);
    for (int64_t n : {int64_t{1}, tokens}) {
      std::vector<float> fast(static_cast<size_t>(n * rows), -1.0f);
      matmul_rows(GgmlType::F16_2OF4, w.data(), k, packed.data(), n, fast.data(), rows, 1, rows);
      EXPECT_EQ(fast[0], -1.0f) << "row 0 is outside the range";
      for (int64_t t = 0; t < n; ++t) {
        for (int64_t r = 1; r < rows; ++r) {
          EXPECT_NEAR(fast[t * rows + r], want(t, r), 1e-4 * (1 + std::fabs(want(t, r))))
              << simd_level_name(level) << " tokens " << n << " t " << t << " r " << r;
        }
      }
    }
  }
  set_simd_level(detected_simd_level());
}

}  // namespace
}  // namespace inferscope::kernels
