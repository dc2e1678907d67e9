// The similarity kernels: every SIMD level this CPU has gives exactly the scalar reference's
// result (one summation order everywhere), for dimensions around every vector-width edge.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/similarity.h"
#include "tests/support/simd_levels.h"

namespace inferscope::kernels {
namespace {

std::vector<float> random_floats(std::mt19937& rng, std::size_t n) {
  std::normal_distribution<float> normal;
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

constexpr std::size_t kDims[] = {0, 1, 5, 8, 15, 16, 17, 31, 32, 33, 64, 100, 384, 385, 768};

TEST(SimilarityKernel, ReferenceIsADotProduct) {
  std::mt19937 rng(7);
  for (std::size_t dim : kDims) {
    const std::vector<float> a = random_floats(rng, dim), b = random_floats(rng, dim);
    double exact = 0.0, magnitude = 0.0;
    for (std::size_t i = 0; i < dim; ++i) {
      exact += static_cast<double>(a[i]) * b[i];
      magnitude += std::fabs(static_cast<double>(a[i]) * b[i]);
    }
    EXPECT_NEAR(dot_reference(a.data(), b.data(), dim), exact, 1e-6 * magnitude + 1e-30) << "dim " << dim;
  }
}

TEST(SimilarityKernel, EveryLevelEqualsTheReferenceBitForBit) {
  testing::SimdLevelGuard restore;
  std::mt19937 rng(11);
  std::vector<SimdLevel> levels = testing::vector_simd_levels();
  levels.insert(levels.begin(), SimdLevel::Scalar);
  for (std::size_t dim : kDims) {
    for (std::size_t n_rows : {0, 1, 3, 4, 5, 13}) {
      const std::vector<float> query = random_floats(rng, dim), rows = random_floats(rng, n_rows * dim);
      std::vector<float> expected(n_rows);
      for (std::size_t r = 0; r < n_rows; ++r) expected[r] = dot_reference(query.data(), rows.data() + r * dim, dim);
      for (SimdLevel level : levels) {
        set_simd_level(level);
        std::vector<float> scores(n_rows, -1.0f);
        dot_rows(query.data(), rows.data(), n_rows, dim, scores.data());
        for (std::size_t r = 0; r < n_rows; ++r) {
          EXPECT_EQ(scores[r], expected[r]) << simd_level_name(level) << " dim " << dim << " row " << r;
          EXPECT_EQ(dot(query.data(), rows.data() + r * dim, dim), expected[r]) << simd_level_name(level);
        }
      }
    }
  }
}

TEST(SimilarityKernel, UnalignedRowsAndQuery) {
  testing::SimdLevelGuard restore;
  std::mt19937 rng(3);
  constexpr std::size_t dim = 37, n_rows = 9;
  const std::vector<float> query = random_floats(rng, dim + 1), rows = random_floats(rng, n_rows * dim + 1);
  for (SimdLevel level : testing::vector_simd_levels()) {
    set_simd_level(level);
    std::vector<float> scores(n_rows);
    dot_rows(query.data() + 1, rows.data() + 1, n_rows, dim, scores.data());
    for (std::size_t r = 0; r < n_rows; ++r) {
      EXPECT_EQ(scores[r], dot_reference(query.data() + 1, rows.data() + 1 + r * dim, dim)) << simd_level_name(level);
    }
  }
}

}  // namespace
}  // namespace inferscope::kernels
