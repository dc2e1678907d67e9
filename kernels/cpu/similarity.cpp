// Dispatch for the similarity kernels, and the scalar reference that fixes their summation order.
#include "kernels/cpu/similarity.h"

#include "kernels/cpu/cpu_features.h"

namespace inferscope::kernels {
namespace {

constexpr size_t kLanes = 16;

// lanes[0..16) -> one value: lane j + lane j+8, then j + j+4, j + j+2, j + j+1 (what a
// 512-bit register folded in halves gives).
float reduce_lanes(float* lanes) {
  for (size_t width = kLanes / 2; width >= 1; width /= 2) {
    for (size_t j = 0; j < width; ++j) lanes[j] = lanes[j] + lanes[j + width];
  }
  return lanes[0];
}

}  // namespace

float dot_reference(const float* a, const float* b, size_t dim) {
  float lanes[kLanes] = {};
  for (size_t i = 0; i < dim; ++i) {
    const float product = a[i] * b[i];  // kernels build with -ffp-contract=off: never fused
    lanes[i % kLanes] = lanes[i % kLanes] + product;
  }
  return reduce_lanes(lanes);
}

float dot(const float* a, const float* b, size_t dim) {
  switch (active_simd_level()) {
    case SimdLevel::Scalar: return dot_reference(a, b, dim);
    case SimdLevel::Avx2: return detail::dot_avx2(a, b, dim);
    default: return detail::dot_avx512(a, b, dim);
  }
}

void dot_rows(const float* query, const float* rows, size_t n_rows, size_t dim, float* scores) {
  switch (active_simd_level()) {
    case SimdLevel::Scalar:
      for (size_t r = 0; r < n_rows; ++r) scores[r] = dot_reference(query, rows + r * dim, dim);
      return;
    case SimdLevel::Avx2: return detail::dot_rows_avx2(query, rows, n_rows, dim, scores);
    default: return detail::dot_rows_avx512(query, rows, n_rows, dim, scores);
  }
}

}  // namespace inferscope::kernels
