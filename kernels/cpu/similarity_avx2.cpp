// AVX2 dot products in the summation order of dot_reference: the 16 lane sums live in two
// 8-float registers (lanes 0-7 and 8-15); the tail is read with masked loads (zeros past dim).
#include <immintrin.h>

#include "kernels/cpu/similarity.h"

namespace inferscope::kernels::detail {
namespace {

// Lanes with index < count load -1 (all bits set: "load"), the others 0. count in [0, 8].
__m256i load_mask(size_t count) {
  const __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), index);
}

// The 16-lane tail masks for rem = dim % 16 elements.
struct TailMasks {
  __m256i low, high;
};

TailMasks tail_masks(size_t rem) { return {load_mask(rem < 8 ? rem : 8), load_mask(rem > 8 ? rem - 8 : 0)}; }

float reduce(__m256 low, __m256 high) {
  const __m256 eight = _mm256_add_ps(low, high);  // lane j + lane j+8
  const __m128 four = _mm_add_ps(_mm256_castps256_ps128(eight), _mm256_extractf128_ps(eight, 1));
  const __m128 two = _mm_add_ps(four, _mm_movehl_ps(four, four));
  const __m128 one = _mm_add_ss(two, _mm_shuffle_ps(two, two, 1));
  return _mm_cvtss_f32(one);
}

// Accumulates a[0..16) * b[0..16) into (low, high); no fused multiply-add, to match the reference.
inline void accumulate_block(const float* a, const float* b, __m256& low, __m256& high) {
  low = _mm256_add_ps(low, _mm256_mul_ps(_mm256_loadu_ps(a), _mm256_loadu_ps(b)));
  high = _mm256_add_ps(high, _mm256_mul_ps(_mm256_loadu_ps(a + 8), _mm256_loadu_ps(b + 8)));
}

inline void accumulate_tail(const float* a, const float* b, const TailMasks& m, __m256& low, __m256& high) {
  low = _mm256_add_ps(low, _mm256_mul_ps(_mm256_maskload_ps(a, m.low), _mm256_maskload_ps(b, m.low)));
  high = _mm256_add_ps(high, _mm256_mul_ps(_mm256_maskload_ps(a + 8, m.high), _mm256_maskload_ps(b + 8, m.high)));
}

}  // namespace

float dot_avx2(const float* a, const float* b, size_t dim) {
  __m256 low = _mm256_setzero_ps(), high = _mm256_setzero_ps();
  const size_t full = dim / 16 * 16;
  for (size_t i = 0; i < full; i += 16) accumulate_block(a + i, b + i, low, high);
  if (full < dim) accumulate_tail(a + full, b + full, tail_masks(dim - full), low, high);
  return reduce(low, high);
}

// Four rows at a time share each load of the query; each row keeps its own lane sums, so the
// order per row is the reference's.
void dot_rows_avx2(const float* query, const float* rows, size_t n_rows, size_t dim, float* scores) {
  const size_t full = dim / 16 * 16;
  const TailMasks masks = tail_masks(dim - full);
  size_t r = 0;
  for (; r + 4 <= n_rows; r += 4) {
    const float* row[4] = {rows + r * dim, rows + (r + 1) * dim, rows + (r + 2) * dim, rows + (r + 3) * dim};
    __m256 low[4], high[4];
    for (int k = 0; k < 4; ++k) low[k] = high[k] = _mm256_setzero_ps();
    for (size_t i = 0; i < full; i += 16) {
      const __m256 q_low = _mm256_loadu_ps(query + i), q_high = _mm256_loadu_ps(query + i + 8);
      for (int k = 0; k < 4; ++k) {
        low[k] = _mm256_add_ps(low[k], _mm256_mul_ps(q_low, _mm256_loadu_ps(row[k] + i)));
        high[k] = _mm256_add_ps(high[k], _mm256_mul_ps(q_high, _mm256_loadu_ps(row[k] + i + 8)));
      }
    }
    for (int k = 0; k < 4; ++k) {
      if (full < dim) accumulate_tail(query + full, row[k] + full, masks, low[k], high[k]);
      scores[r + k] = reduce(low[k], high[k]);
    }
  }
  for (; r < n_rows; ++r) scores[r] = dot_avx2(query, rows + r * dim, dim);
}

}  // namespace inferscope::kernels::detail
