// The weight lab's linear algebra against direct double-precision computations: the Hessian of
// calibration rows, the Cholesky factor, the triangular inverse, and GPTQ's factor U of H^-1.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "engine/core/thread_pool.h"
#include "engine/weightlab/linalg.h"

namespace inferscope {
namespace {

std::vector<float> random_rows(int64_t n, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n * cols));
  for (float& v : x) v = dist(rng);
  // Correlated columns, as activations are.
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t c = 1; c < cols; ++c) x[static_cast<size_t>(t * cols + c)] += 0.5f * x[static_cast<size_t>(t * cols + c - 1)];
  }
  return x;
}

TEST(Linalg, HessianIsTwiceTheMeanOuterProduct) {
  ThreadPool pool(2);
  const int64_t n = 50, cols = 70;
  const std::vector<float> x = random_rows(n, cols, 1);
  const std::vector<float> h = hessian(x.data(), n, cols, pool);
  for (int64_t i = 0; i < cols; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      double want = 0;
      for (int64_t t = 0; t < n; ++t) want += static_cast<double>(x[t * cols + i]) * x[t * cols + j];
      want *= 2.0 / n;
      ASSERT_NEAR(h[static_cast<size_t>(i * cols + j)], want, 1e-4 * (1 + std::fabs(want))) << i << "," << j;
    }
  }
}

TEST(Linalg, InverseCholeskyFactorTimesItselfInvertsH) {
  ThreadPool pool(2);
  const int64_t n = 400, cols = 150;  // more than two column tiles
  const std::vector<float> x = random_rows(n, cols, 2);
  std::vector<float> h = hessian(x.data(), n, cols, pool);
  for (int64_t i = 0; i < cols; ++i) h[static_cast<size_t>(i * cols + i)] += 0.01f;
  auto u = inverse_cholesky_upper(h, cols, pool);
  ASSERT_TRUE(u) << u.message();
  // Upper triangular, and (U^T U) H = I.
  std::vector<double> inv(static_cast<size_t>(cols * cols), 0.0);
  for (int64_t i = 0; i < cols; ++i) {
    for (int64_t j = 0; j < i; ++j) ASSERT_EQ((*u)[static_cast<size_t>(i * cols + j)], 0.0f);
    for (int64_t j = 0; j < cols; ++j) {
      double s = 0;
      for (int64_t k = 0; k <= std::min(i, j); ++k) s += static_cast<double>((*u)[k * cols + i]) * (*u)[k * cols + j];
      inv[static_cast<size_t>(i * cols + j)] = s;
    }
  }
  double worst = 0;
  for (int64_t i = 0; i < cols; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      double s = 0;
      for (int64_t k = 0; k < cols; ++k) s += inv[static_cast<size_t>(i * cols + k)] * h[static_cast<size_t>(k * cols + j)];
      worst = std::max(worst, std::fabs(s - (i == j ? 1.0 : 0.0)));
    }
  }
  EXPECT_LT(worst, 2e-3);
}

TEST(Linalg, CholeskyRefusesAMatrixThatIsNotPositiveDefinite) {
  std::vector<float> a = {1, 2, 2, 1};  // eigenvalues 3 and -1
  const Status st = cholesky_upper(a, 2);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("not positive definite"), std::string::npos);
}

TEST(Linalg, UpperInverseTimesTheMatrixIsTheIdentity) {
  ThreadPool pool(2);
  const int64_t n = 130;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> r(static_cast<size_t>(n * n), 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    r[static_cast<size_t>(i * n + i)] = 2.0f + dist(rng);
    for (int64_t j = i + 1; j < n; ++j) r[static_cast<size_t>(i * n + j)] = 0.1f * dist(rng);
  }
  const std::vector<float> v = invert_upper(r, n, pool);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t k = 0; k < n; ++k) s += static_cast<double>(v[i * n + k]) * r[k * n + j];
      ASSERT_NEAR(s, i == j ? 1.0 : 0.0, 1e-4) << i << "," << j;
    }
  }
}

}  // namespace
}  // namespace inferscope
