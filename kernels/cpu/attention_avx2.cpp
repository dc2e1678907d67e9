// AVX2 + F16C attention: scores for 8 positions at a time (one horizontal reduction per 8
// dot products), and the weighted sum of values kept in registers 64 dimensions at a time.
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

// Lane j of the result is the sum of the 8 lanes of a[j].
inline __m256 horizontal_sums8(const __m256* a) {
  const __m256 s0123 = _mm256_hadd_ps(_mm256_hadd_ps(a[0], a[1]), _mm256_hadd_ps(a[2], a[3]));
  const __m256 s4567 = _mm256_hadd_ps(_mm256_hadd_ps(a[4], a[5]), _mm256_hadd_ps(a[6], a[7]));
  return _mm256_add_ps(_mm256_permute2f128_ps(s0123, s4567, 0x20), _mm256_permute2f128_ps(s0123, s4567, 0x31));
}

// Value d of row p's head: F16 rows.
inline const uint16_t* f16_head(const KvRows& rows, int64_t p, int64_t d) {
  return reinterpret_cast<const uint16_t*>(rows.row(p)) + rows.first + d;
}

// out[0 .. 8R) = sum_p w[p] * v_p[d0 .. d0 + 8R), accumulated in R registers.
template <int R>
void weighted_values(const float* w, const KvRows& v, int64_t d0, int64_t n_kv, float* out) {
  __m256 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  for (int64_t p = 0; p < n_kv; ++p) {
    const uint16_t* vp = f16_head(v, p, d0);
    const __m256 weight = _mm256_set1_ps(w[p]);
    for (int r = 0; r < R; ++r) acc[r] = _mm256_fmadd_ps(weight, load_f16x8(vp + 8 * r), acc[r]);
  }
  for (int r = 0; r < R; ++r) _mm256_storeu_ps(out + 8 * r, acc[r]);
}

}  // namespace

// Precondition: head_dim % 8 == 0, head_dim <= 1024.
void attention_head_f16_avx2(const float* q, const KvRows& k, const KvRows& v, int64_t n_kv, int64_t head_dim,
                             float scale, float* scores, float* out, float softcap) {
  alignas(32) float qh[1024];
  for (int64_t d = 0; d < head_dim; d += 8) _mm256_store_ps(qh + d, round_to_fp16x8(_mm256_loadu_ps(q + d)));
  const __m256 vscale = _mm256_set1_ps(scale);
  int64_t p = 0;
  for (; p + 8 <= n_kv; p += 8) {
    __m256 acc[8];
    for (int j = 0; j < 8; ++j) acc[j] = _mm256_setzero_ps();
    for (int64_t d = 0; d < head_dim; d += 8) {
      const __m256 qv = _mm256_load_ps(qh + d);
      for (int j = 0; j < 8; ++j) acc[j] = _mm256_fmadd_ps(qv, load_f16x8(f16_head(k, p + j, d)), acc[j]);
    }
    _mm256_storeu_ps(scores + p, _mm256_mul_ps(horizontal_sums8(acc), vscale));
  }
  for (; p < n_kv; ++p) {
    const uint16_t* kp = f16_head(k, p, 0);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t d = 0; d < head_dim; d += 8) acc = _mm256_fmadd_ps(_mm256_load_ps(qh + d), load_f16x8(kp + d), acc);
    scores[p] = horizontal_sum(acc) * scale;
  }
  if (softcap > 0.0f) kernels::softcap(scores, n_kv, softcap);
  softmax(scores, n_kv);
  for (p = 0; p + 8 <= n_kv; p += 8) _mm256_storeu_ps(scores + p, round_to_fp16x8(_mm256_loadu_ps(scores + p)));
  for (; p < n_kv; ++p) scores[p] = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtps_ph(_mm_set_ss(scores[p]), 0)));
  int64_t d = 0;
  for (; d + 64 <= head_dim; d += 64) weighted_values<8>(scores, v, d, n_kv, out + d);
  for (; d < head_dim; d += 8) weighted_values<1>(scores, v, d, n_kv, out + d);
}

}  // namespace inferscope::kernels::detail
