// LLM.int8()'s decomposition on inputs with injected outlier columns: the decomposed product is
// close to the exact one while plain per-token int8 is not; without outliers it is exactly the
// per-token int8 product.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/int8_rows.h"
#include "kernels/cpu/llm_int8.h"

namespace inferscope::kernels {
namespace {

constexpr int64_t kRows = 16, kK = 256, kTokens = 4;

struct Problem {
  std::vector<int8_t> q;      // [kRows][kK]
  std::vector<float> scales;  // [kRows]
  std::vector<float> x;       // [kTokens][kK]
};

Problem problem(bool outliers) {
  std::mt19937 rng(21);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  Problem p;
  p.q.resize(kRows * kK);
  p.scales.resize(kRows);
  std::vector<float> w(kK);
  for (int64_t r = 0; r < kRows; ++r) {
    for (float& v : w) v = 0.02f * dist(rng);
    p.scales[r] = quantize_row_i8(w.data(), p.q.data() + r * kK, kK);
  }
  p.x.resize(kTokens * kK);
  for (float& v : p.x) v = dist(rng);
  if (outliers) {
    for (int64_t t = 0; t < kTokens; ++t) {
      p.x[t * kK + 7] = 60.0f * (t % 2 ? 1.0f : -1.0f);
      p.x[t * kK + 100] = 45.0f;
    }
  }
  return p;
}

// ||y - exact|| / ||exact|| over every row and token, with exact in double.
double relative_error(const Problem& p, const std::vector<float>& y) {
  double err = 0, norm = 0;
  for (int64_t t = 0; t < kTokens; ++t) {
    for (int64_t r = 0; r < kRows; ++r) {
      double exact = 0;
      for (int64_t j = 0; j < kK; ++j) exact += static_cast<double>(p.scales[r]) * p.q[r * kK + j] * p.x[t * kK + j];
      err += (y[t * kRows + r] - exact) * (y[t * kRows + r] - exact);
      norm += exact * exact;
    }
  }
  return std::sqrt(err / norm);
}

std::vector<float> run(const Problem& p, float threshold, LlmInt8Batch& batch) {
  prepare_llm_int8(p.x.data(), kK, kTokens, threshold, batch);
  std::vector<float> y(kTokens * kRows);
  llm_int8_rows(p.q.data(), p.scales.data(), batch, y.data(), kRows, 0, kRows);
  return y;
}

TEST(LlmInt8, DecompositionKeepsOutlierColumnsExactWherePlainInt8LosesTheRest) {
  const Problem p = problem(true);
  LlmInt8Batch batch;
  const double decomposed = relative_error(p, run(p, 6.0f, batch));
  EXPECT_EQ(batch.outliers, (std::vector<int32_t>{7, 100}));
  const double plain = relative_error(p, run(p, 1e9f, batch));
  EXPECT_TRUE(batch.outliers.empty());
  // The outlier columns dominate the products; what plain int8 loses is everything else.
  EXPECT_LT(decomposed, 0.002) << "plain " << plain;
  EXPECT_GT(plain, 10 * decomposed);
}

TEST(LlmInt8, WithoutOutliersItIsThePerTokenInt8Product) {
  const Problem p = problem(false);
  LlmInt8Batch batch;
  const std::vector<float> y = run(p, 6.0f, batch);
  ASSERT_TRUE(batch.outliers.empty());
  for (int64_t t = 0; t < kTokens; ++t) {
    std::vector<int8_t> xq(kK);
    const float ts = quantize_row_i8(p.x.data() + t * kK, xq.data(), kK);
    for (int64_t r = 0; r < kRows; ++r) {
      int32_t dot = 0;
      for (int64_t j = 0; j < kK; ++j) dot += p.q[r * kK + j] * xq[j];
      EXPECT_EQ(y[t * kRows + r], static_cast<float>(dot) * (ts * p.scales[r])) << t << "," << r;
    }
  }
}

}  // namespace
}  // namespace inferscope::kernels
