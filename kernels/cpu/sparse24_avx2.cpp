// The F16_2OF4 matmul with AVX2: per block, the 16 kept F16 values converted with F16C, and the
// activations at their positions fetched with two 8-lane gathers; one FMA chain per token.
#include <immintrin.h>

#include "kernels/cpu/sparse24.h"

namespace inferscope::kernels::detail {
namespace {

inline float hsum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 h = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps(h, h, 1)));
}

// Element offsets within the block of the 16 kept values: group g's at 4g + position.
inline void kept_offsets(const uint8_t* pos, __m256i& lo, __m256i& hi) {
  const uint32_t bits = static_cast<uint32_t>(pos[0]) | (static_cast<uint32_t>(pos[1]) << 8) |
                        (static_cast<uint32_t>(pos[2]) << 16) | (static_cast<uint32_t>(pos[3]) << 24);
  // Value i (0..15) has its 2-bit position at bit 2i of `bits`, in group i / 2.
  const __m256i shifts_lo = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
  const __m256i shifts_hi = _mm256_setr_epi32(16, 18, 20, 22, 24, 26, 28, 30);
  const __m256i base_lo = _mm256_setr_epi32(0, 0, 4, 4, 8, 8, 12, 12);
  const __m256i base_hi = _mm256_setr_epi32(16, 16, 20, 20, 24, 24, 28, 28);
  const __m256i all = _mm256_set1_epi32(static_cast<int32_t>(bits));
  const __m256i three = _mm256_set1_epi32(3);
  lo = _mm256_add_epi32(base_lo, _mm256_and_si256(_mm256_srlv_epi32(all, shifts_lo), three));
  hi = _mm256_add_epi32(base_hi, _mm256_and_si256(_mm256_srlv_epi32(all, shifts_hi), three));
}

}  // namespace

void matmul_sparse24_avx2(const uint8_t* w, int64_t k, int64_t row_bytes, const float* x, int64_t x_stride,
                          int64_t n_tokens, float* y, int64_t y_stride, int64_t r0, int64_t r1) {
  const int64_t nb = k / 32;
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = w + r * row_bytes;
    for (int64_t t = 0; t < n_tokens; ++t) {
      const float* xt = x + t * x_stride;
      __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
      for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* block = row + b * kSparse24BlockBytes;
        const __m256 v0 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block)));
        const __m256 v1 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 16)));
        __m256i lo, hi;
        kept_offsets(block + 32, lo, hi);
        const float* xb = xt + b * 32;
        acc0 = _mm256_fmadd_ps(v0, _mm256_i32gather_ps(xb, lo, 4), acc0);
        acc1 = _mm256_fmadd_ps(v1, _mm256_i32gather_ps(xb, hi, 4), acc1);
      }
      y[t * y_stride + r] = hsum(_mm256_add_ps(acc0, acc1));
    }
  }
}

}  // namespace inferscope::kernels::detail
