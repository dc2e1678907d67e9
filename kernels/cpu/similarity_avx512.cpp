// AVX-512 dot products in the summation order of dot_reference: the 16 lane sums are one
// register; the tail is read with a masked load (zeros past dim).
// GCC 12 reports its own _mm512_undefined_* idiom (`__Y = __Y`) as uninitialized once inlined.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "kernels/cpu/similarity.h"

namespace inferscope::kernels::detail {
namespace {

__mmask16 tail_mask(size_t rem) { return static_cast<__mmask16>((1u << rem) - 1u); }  // rem < 16

// Folds in halves: lane j + j+8, j + j+4, j + j+2, j + j+1 (the reference's tree).
float reduce(__m512 lanes) {
  const __m256 eight = _mm256_add_ps(_mm512_castps512_ps256(lanes), _mm512_extractf32x8_ps(lanes, 1));
  const __m128 four = _mm_add_ps(_mm256_castps256_ps128(eight), _mm256_extractf128_ps(eight, 1));
  const __m128 two = _mm_add_ps(four, _mm_movehl_ps(four, four));
  const __m128 one = _mm_add_ss(two, _mm_shuffle_ps(two, two, 1));
  return _mm_cvtss_f32(one);
}

// No fused multiply-add, to match the reference.
inline __m512 accumulate(__m512 sum, __m512 a, __m512 b) { return _mm512_add_ps(sum, _mm512_mul_ps(a, b)); }

}  // namespace

float dot_avx512(const float* a, const float* b, size_t dim) {
  __m512 sum = _mm512_setzero_ps();
  const size_t full = dim / 16 * 16;
  for (size_t i = 0; i < full; i += 16) sum = accumulate(sum, _mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));
  if (full < dim) {
    const __mmask16 m = tail_mask(dim - full);
    sum = accumulate(sum, _mm512_maskz_loadu_ps(m, a + full), _mm512_maskz_loadu_ps(m, b + full));
  }
  return reduce(sum);
}

// Four rows at a time share each load of the query; each row keeps its own lane sums.
void dot_rows_avx512(const float* query, const float* rows, size_t n_rows, size_t dim, float* scores) {
  const size_t full = dim / 16 * 16;
  const __mmask16 m = tail_mask(dim - full);
  size_t r = 0;
  for (; r + 4 <= n_rows; r += 4) {
    const float* row[4] = {rows + r * dim, rows + (r + 1) * dim, rows + (r + 2) * dim, rows + (r + 3) * dim};
    __m512 sum[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    for (size_t i = 0; i < full; i += 16) {
      const __m512 q = _mm512_loadu_ps(query + i);
      for (int k = 0; k < 4; ++k) sum[k] = accumulate(sum[k], q, _mm512_loadu_ps(row[k] + i));
    }
    if (full < dim) {
      const __m512 q = _mm512_maskz_loadu_ps(m, query + full);
      for (int k = 0; k < 4; ++k) sum[k] = accumulate(sum[k], q, _mm512_maskz_loadu_ps(m, row[k] + full));
    }
    for (int k = 0; k < 4; ++k) scores[r + k] = reduce(sum[k]);
  }
  for (; r < n_rows; ++r) scores[r] = dot_avx512(query, rows + r * dim, dim);
}

}  // namespace inferscope::kernels::detail
