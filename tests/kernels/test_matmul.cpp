// Matmul kernels: every SIMD variant against the scalar reference on random data (all weight
// types, odd sizes, partial row ranges, odd token counts), the reference against a plain float
// product of the dequantized weights, and the activation packing against the Q8_0 rule.
#include "kernels/cpu/matmul.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/dequantize.h"
#include "kernels/formats/fp16.h"
#include "kernels/cpu/matmul_internal.h"
#include "kernels/cpu/quantize.h"
#include "tests/support/matmul_problem.h"
#include "tests/support/simd_levels.h"

namespace inferscope::kernels {
namespace {

constexpr GgmlType kTypes[] = {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_0};

using Problem = testing::MatmulProblem;

// Rows of different magnitudes with an all-zero block every 7th row; activations with outliers.
Problem make_problem(GgmlType type, int64_t k, int64_t rows, int64_t n_tokens, uint32_t seed) {
  Problem p{type, k, rows, n_tokens, {}, {}, {}, {}};
  std::mt19937 rng(seed);
  p.weights = testing::random_quantized_rows(type, k, rows, rng, 7, 3, 32);
  p.x = testing::random_activations(k, n_tokens, rng);
  testing::decode_and_pack(p);
  return p;
}

// sum_i |w_i x_i| for one (row, token): the scale errors are measured against.
double abs_dot(const Problem& p, int64_t r, int64_t t) {
  double s = 0.0;
  for (int64_t i = 0; i < p.k; ++i) {
    s += std::fabs(static_cast<double>(p.w_float[static_cast<size_t>(r * p.k + i)]) * p.x[static_cast<size_t>(t * p.k + i)]);
  }
  return s;
}

// Whether the AVX-512 prefill of BF16 weights rounds the activations to BF16 here.
bool bf16_activations(GgmlType type, SimdLevel level, int64_t k, int64_t n_tokens) {
  return type == GgmlType::BF16 && level == SimdLevel::Avx512 && cpu_features().avx512bf16 && k % 2 == 0 &&
         n_tokens >= 6;
}

double tolerance(GgmlType type, SimdLevel level, int64_t k, int64_t n_tokens) {
  // Float accumulation over k in binary32 vs the double reference. The AMX path multiplies
  // float/F16 weights with activations split into two bf16 terms (about 16 significant bits);
  // the AVX512-BF16 path rounds them to BF16 (each product within 2^-9).
  if (level == SimdLevel::Amx && !detail::is_quantized(type)) return 2e-4;
  if (bf16_activations(type, level, k, n_tokens)) return 4e-3;
  return 2e-5;
}

// Runs the active level over [row_begin, row_end) and compares with the reference.
void check_against_reference(const Problem& p, SimdLevel level, int64_t row_begin, int64_t row_end,
                             const std::string& what) {
  const int64_t y_stride = p.rows + 3;
  const float sentinel = -12345.0f;
  std::vector<float> ref(static_cast<size_t>(y_stride * p.n_tokens), sentinel);
  std::vector<float> got(ref.size(), sentinel);
  matmul_rows_reference(p.type, p.weights.data(), p.k, p.packed.data(), p.n_tokens, ref.data(), y_stride, row_begin,
                        row_end);
  set_simd_level(level);
  matmul_rows(p.type, p.weights.data(), p.k, p.packed.data(), p.n_tokens, got.data(), y_stride, row_begin, row_end);
  const double tol = tolerance(p.type, level, p.k, p.n_tokens);
  for (int64_t t = 0; t < p.n_tokens; ++t) {
    for (int64_t r = 0; r < y_stride; ++r) {
      const size_t i = static_cast<size_t>(t * y_stride + r);
      if (r < row_begin || r >= row_end) {
        ASSERT_EQ(got[i], sentinel) << what << " wrote outside its rows: t=" << t << " r=" << r;
        continue;
      }
      ASSERT_TRUE(std::isfinite(got[i])) << what << " t=" << t << " r=" << r;
      const double scale = abs_dot(p, r, t) + 1e-30;
      const double err = std::fabs(static_cast<double>(got[i]) - ref[i]) / scale;
      ASSERT_LE(err, tol) << what << " t=" << t << " r=" << r << " got " << got[i] << " ref " << ref[i];
    }
  }
}

std::string describe(GgmlType type, SimdLevel level, int64_t k, int64_t rows, int64_t n, int64_t rb, int64_t re) {
  return std::string(type_name(type)) + "/" + simd_level_name(level) + " k=" + std::to_string(k) +
         " rows=" + std::to_string(rows) + " n=" + std::to_string(n) + " range=[" + std::to_string(rb) + "," +
         std::to_string(re) + ")";
}

TEST(Matmul, SupportedTypes) {
  for (GgmlType t : kTypes) EXPECT_TRUE(matmul_supported(t));
  EXPECT_TRUE(matmul_supported(GgmlType::IQ2_XXS));  // through decoded panels (matmul_dequantized.h)
  EXPECT_FALSE(matmul_supported(GgmlType::Q8_1));
}

TEST(Matmul, SimdVariantsMatchReferenceOnOddShapes) {
  testing::SimdLevelGuard guard;
  const int64_t float_ks[] = {1, 7, 16, 17, 33, 100, 255, 1000};
  const int64_t quant_ks[] = {32, 96, 288, 1056};  // one block; not multiples of 64 / 256
  const int64_t row_counts[] = {1, 3, 17, 33, 70};
  const int64_t token_counts[] = {1, 2, 3, 4, 5, 7, 9, 13, 16, 17};
  uint32_t seed = 1;
  for (GgmlType type : kTypes) {
    const bool quant = detail::is_quantized(type);
    const auto ks = quant ? std::vector<int64_t>(std::begin(quant_ks), std::end(quant_ks))
                          : std::vector<int64_t>(std::begin(float_ks), std::end(float_ks));
    for (int64_t k : ks) {
      for (size_t ti = 0; ti < std::size(token_counts); ++ti) {
        const int64_t n = token_counts[ti];
        const int64_t rows = row_counts[(ti + static_cast<size_t>(k)) % std::size(row_counts)];
        const Problem p = make_problem(type, k, rows, n, seed++);
        for (SimdLevel level : testing::vector_simd_levels()) {
          check_against_reference(p, level, 0, rows, describe(type, level, k, rows, n, 0, rows));
          if (rows > 2) {
            const int64_t rb = rows / 3, re = rows - 1;  // a range that starts and ends mid-tile
            check_against_reference(p, level, rb, re, describe(type, level, k, rows, n, rb, re));
          }
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

// The AVX512-BF16 prefill of BF16 weights computes the products of the weights with the
// activations rounded to BF16, in F32 sums: against the reference on those rounded activations
// it is as close as the float paths are.
TEST(Matmul, Bf16PrefillMultipliesActivationsRoundedToBf16) {
  if (!cpu_features().avx512bf16 || detected_simd_level() != SimdLevel::Avx512) {
    GTEST_SKIP() << "needs AVX512-BF16 without AMX";
  }
  testing::SimdLevelGuard guard;
  for (auto [k, rows, n] : {std::tuple<int64_t, int64_t, int64_t>{512, 96, 40}, {34, 33, 6}, {1030, 17, 13}}) {
    Problem p = make_problem(GgmlType::BF16, k, rows, n, 77);
    for (float& v : p.x) v = bf16_to_fp32(fp32_to_bf16(v));
    testing::decode_and_pack(p);
    ASSERT_TRUE(bf16_activations(p.type, SimdLevel::Avx512, k, n));
    std::vector<float> ref(static_cast<size_t>(rows * n)), got(ref.size());
    matmul_rows_reference(p.type, p.weights.data(), k, p.packed.data(), n, ref.data(), rows, 0, rows);
    set_simd_level(SimdLevel::Avx512);
    matmul_rows(p.type, p.weights.data(), k, p.packed.data(), n, got.data(), rows, 0, rows);
    for (int64_t t = 0; t < n; ++t) {
      for (int64_t r = 0; r < rows; ++r) {
        const size_t i = static_cast<size_t>(t * rows + r);
        ASSERT_LE(std::fabs(static_cast<double>(got[i]) - ref[i]) / (abs_dot(p, r, t) + 1e-30), 2e-5)
            << "k=" << k << " t=" << t << " r=" << r;
      }
    }
  }
}

// The kernel names follow the dispatch: int8 panels for a quantized prefill, dot products for
// decode, the scalar reference when SIMD is off.
TEST(Matmul, KernelNamesFollowTheDispatch) {
  testing::SimdLevelGuard guard;
  if (detected_simd_level() >= SimdLevel::Avx512) {
    set_simd_level(SimdLevel::Avx512);
    EXPECT_EQ(matmul_kernel_name(GgmlType::Q4_0, 4096, 128), "AVX-512 VNNI int8 panels, Q8_0 activations");
    EXPECT_EQ(matmul_kernel_name(GgmlType::Q4_0, 4096, 1), "AVX-512 VNNI int8 dot, Q8_0 activations");
    EXPECT_EQ(matmul_kernel_name(GgmlType::F16, 4096, 128), "AVX-512 F32 FMA panels");
  }
  set_simd_level(SimdLevel::Scalar);
  EXPECT_EQ(matmul_kernel_name(GgmlType::BF16, 4096, 128), "scalar reference");
}

TEST(Matmul, SimdVariantsMatchReferenceOnPrefillShapes) {
  testing::SimdLevelGuard guard;
  uint32_t seed = 1000;
  for (GgmlType type : kTypes) {
    // The last three have more k steps than one AMX K chunk (64 x 32), with few and many tokens,
    // and more rows than one AMX row group (512).
    for (auto [k, rows, n] : {std::tuple<int64_t, int64_t, int64_t>{512, 96, 128}, {1024, 53, 37}, {2048, 40, 71},
                              {4160, 35, 20}, {2304, 33, 150}, {2112, 600, 17}}) {
      const Problem p = make_problem(type, k, rows, n, seed++);
      for (SimdLevel level : testing::vector_simd_levels()) {
        check_against_reference(p, level, 0, rows, describe(type, level, k, rows, n, 0, rows));
        check_against_reference(p, level, 5, rows - 6, describe(type, level, k, rows, n, 5, rows - 6));
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(Matmul, ThreadsSplittingRowsGiveTheSameResult) {
  testing::SimdLevelGuard guard;
  for (GgmlType type : kTypes) {
    const Problem p = make_problem(type, 512, 150, 20, 77);
    for (SimdLevel level : testing::vector_simd_levels()) {
      set_simd_level(level);
      std::vector<float> whole(static_cast<size_t>(150 * 20)), split(whole.size());
      matmul_rows(type, p.weights.data(), p.k, p.packed.data(), p.n_tokens, whole.data(), 150, 0, 150);
      std::thread a([&] { matmul_rows(type, p.weights.data(), p.k, p.packed.data(), p.n_tokens, split.data(), 150, 0, 77); });
      std::thread b([&] { matmul_rows(type, p.weights.data(), p.k, p.packed.data(), p.n_tokens, split.data(), 150, 77, 150); });
      a.join();
      b.join();
      // Same kernels on the same rows: identical bits except where tiles are cut differently,
      // so compare with a tight tolerance rather than bit equality.
      for (size_t i = 0; i < whole.size(); ++i) {
        ASSERT_NEAR(split[i], whole[i], 1e-4 * (std::fabs(whole[i]) + 1.0f)) << type_name(type) << " " << i;
      }
    }
  }
}

// The reference itself against a plain float product of the dequantized weights with the
// unquantized activations, within a rigorous bound for the Q8 activation rounding.
TEST(Matmul, ReferenceMatchesDequantizedFloatProduct) {
  for (GgmlType type : kTypes) {
    const Problem p = make_problem(type, 320, 9, 5, 5);
    std::vector<float> y(static_cast<size_t>(9 * 5));
    matmul_rows_reference(type, p.weights.data(), p.k, p.packed.data(), p.n_tokens, y.data(), 9, 0, 9);
    for (int64_t t = 0; t < p.n_tokens; ++t) {
      for (int64_t r = 0; r < p.rows; ++r) {
        double exact = 0.0, bound = 1e-6 * abs_dot(p, r, t);
        for (int64_t i = 0; i < p.k; ++i) {
          const double w = p.w_float[static_cast<size_t>(r * p.k + i)];
          exact += w * p.x[static_cast<size_t>(t * p.k + i)];
          if (detail::is_quantized(type)) {
            float amax = 0.0f;  // |x - q*d| <= d/2 = amax/254 per element of the block
            const int64_t b0 = i / 32 * 32;
            for (int64_t j = b0; j < b0 + 32; ++j) amax = std::max(amax, std::fabs(p.x[static_cast<size_t>(t * p.k + j)]));
            bound += std::fabs(w) * (amax / 254.0) * 1.0001;
          }
        }
        EXPECT_NEAR(y[static_cast<size_t>(t * 9 + r)], exact, bound) << type_name(type) << " t=" << t << " r=" << r;
      }
    }
  }
}

TEST(Matmul, QuantizedPackingFollowsTheQ8_0Rule) {
  testing::SimdLevelGuard guard;
  const int64_t k = 160, n = 3;
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> x(static_cast<size_t>(k * n));
  for (float& v : x) v = normal(rng);
  for (int64_t i = 32; i < 64; ++i) x[static_cast<size_t>(i)] = 0.0f;                 // zero block
  for (int64_t i = 64; i < 96; ++i) x[static_cast<size_t>(i)] = 0.5f * static_cast<float>(i - 80);  // ties
  x[64] = -127.0f * 0.5f;
  for (GgmlType w : {GgmlType::Q8_0, GgmlType::Q4_0}) {
    std::vector<std::vector<uint8_t>> per_level;
    for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512, SimdLevel::Amx}) {
      if (static_cast<int>(level) > static_cast<int>(detected_simd_level())) continue;
      set_simd_level(level);
      std::vector<uint8_t> packed(packed_activation_bytes(w, k, n), 0xCD);
      pack_activations(w, x.data(), k, n, packed.data(), 0, n);
      per_level.push_back(packed);
    }
    for (size_t i = 1; i < per_level.size(); ++i) {
      EXPECT_EQ(per_level[i], per_level[0]) << "level " << i;
    }
    const detail::Q8Layout l = detail::q8_layout(k);
    const std::vector<uint8_t>& packed = per_level[0];
    for (int64_t t = 0; t < n; ++t) {
      std::vector<uint8_t> q8(static_cast<size_t>(row_bytes(GgmlType::Q8_0, k)));
      ASSERT_TRUE(quantize_row(GgmlType::Q8_0, x.data() + t * k, q8.data(), k));
      const uint8_t* row = packed.data() + t * l.row_stride;
      for (int64_t b = 0; b < l.n_blocks; ++b) {
        float d;
        int32_t stored_sum;
        std::memcpy(&d, row + l.d_offset + 4 * b, 4);
        std::memcpy(&stored_sum, row + l.sum_offset + 4 * b, 4);
        const uint8_t* block = q8.data() + b * 34;
        EXPECT_EQ(static_cast<uint16_t>(block[0] | (block[1] << 8)), fp32_to_fp16(d)) << "block " << b;
        EXPECT_EQ(std::memcmp(row + b * 32, block + 2, 32), 0) << "values of block " << b;
        int32_t sum = 0;
        for (int j = 0; j < 32; ++j) sum += static_cast<int8_t>(row[b * 32 + j]);
        EXPECT_EQ(stored_sum, sum);
      }
    }
  }
}

TEST(Matmul, PackingARangeWritesOnlyThoseTokens) {
  for (GgmlType w : kTypes) {
    const int64_t k = 64, n = 5;
    std::vector<float> x(static_cast<size_t>(k * n), 1.5f);
    std::vector<uint8_t> whole(packed_activation_bytes(w, k, n), 0xEE), parts(whole.size(), 0xEE);
    pack_activations(w, x.data(), k, n, whole.data(), 0, n);
    pack_activations(w, x.data(), k, n, parts.data(), 3, 5);
    pack_activations(w, x.data(), k, n, parts.data(), 0, 3);
    EXPECT_EQ(parts, whole) << type_name(w);
    std::vector<uint8_t> one(whole.size(), 0xEE);
    pack_activations(w, x.data(), k, n, one.data(), 2, 3);
    const size_t stride = whole.size() / n;
    for (size_t i = 0; i < one.size(); ++i) {
      if (i / stride != 2) {
        ASSERT_EQ(one[i], 0xEE) << type_name(w) << " byte " << i;
      }
    }
  }
}

}  // namespace
}  // namespace inferscope::kernels
