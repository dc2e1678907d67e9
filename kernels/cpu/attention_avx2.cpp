// AVX2 + F16C attention: converts 8 F16 cache values per instruction.
#include <immintrin.h>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/ops.h"

namespace inferscope::kernels::detail {

namespace {

inline __m256 load_f16x8(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

inline __m256 round_to_fp16x8(__m256 v) { return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT)); }

inline float horizontal_sum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

}  // namespace

// Precondition: head_dim % 8 == 0.
void attention_head_f16_avx2(const float* q, const uint16_t* k, const uint16_t* v, int64_t kv_stride, int64_t n_kv,
                             int64_t head_dim, float scale, float* scores, float* out) {
  alignas(32) float qh[1024];
  for (int64_t d = 0; d < head_dim; d += 8) _mm256_store_ps(qh + d, round_to_fp16x8(_mm256_loadu_ps(q + d)));
  for (int64_t p = 0; p < n_kv; ++p) {
    const uint16_t* kp = k + p * kv_stride;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t d = 0; d < head_dim; d += 8) acc = _mm256_fmadd_ps(_mm256_load_ps(qh + d), load_f16x8(kp + d), acc);
    scores[p] = horizontal_sum(acc) * scale;
  }
  softmax(scores, n_kv);
  int64_t p = 0;
  for (; p + 8 <= n_kv; p += 8) _mm256_storeu_ps(scores + p, round_to_fp16x8(_mm256_loadu_ps(scores + p)));
  for (; p < n_kv; ++p) scores[p] = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtps_ph(_mm_set_ss(scores[p]), 0)));
  for (int64_t d = 0; d < head_dim; d += 8) _mm256_storeu_ps(out + d, _mm256_setzero_ps());
  for (int64_t p = 0; p < n_kv; ++p) {
    const uint16_t* vp = v + p * kv_stride;
    const __m256 w = _mm256_set1_ps(scores[p]);
    for (int64_t d = 0; d < head_dim; d += 8) {
      _mm256_storeu_ps(out + d, _mm256_fmadd_ps(w, load_f16x8(vp + d), _mm256_loadu_ps(out + d)));
    }
  }
}

}  // namespace inferscope::kernels::detail
