// attention_group: the fused path for groups of up to 8 queries (the scalar reference here,
// AVX2 in attention_group_avx2.cpp).
#include <algorithm>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/formats/fp16.h"
#include "kernels/cpu/ops.h"

namespace inferscope::kernels {

namespace detail {

void attention_group_fused_scalar(const float* q, int64_t q_stride, int64_t n_q, const KvRows& k, const KvRows& v,
                                  int64_t n_kv, int64_t head_dim, float scale, float softcap, float* scores,
                                  float* out, int64_t out_stride) {
  float row[1024];
  float qr[8 * 1024];  // q, rounded to F16 when K is F16
  for (int64_t i = 0; i < n_q; ++i) {
    for (int64_t d = 0; d < head_dim; ++d) {
      const float x = q[i * q_stride + d];
      qr[i * head_dim + d] = k.type == KvType::F16 ? round_to_fp16(x) : x;
    }
  }
  for (int64_t p = 0; p < n_kv; ++p) {
    kv_dequantize(k.type, k.row(p), k.first, head_dim, row);
    for (int64_t i = 0; i < n_q; ++i) {
      const float* qi = qr + i * head_dim;
      float dot = 0.0f;
      for (int64_t d = 0; d < head_dim; ++d) dot += qi[d] * row[d];
      scores[i * n_kv + p] = dot * scale;
    }
  }
  for (int64_t i = 0; i < n_q; ++i) {
    if (softcap > 0.0f) kernels::softcap(scores + i * n_kv, n_kv, softcap);
    softmax(scores + i * n_kv, n_kv);
    if (v.type == KvType::F16) {
      for (int64_t p = 0; p < n_kv; ++p) scores[i * n_kv + p] = round_to_fp16(scores[i * n_kv + p]);
    }
    std::fill(out + i * out_stride, out + i * out_stride + head_dim, 0.0f);
  }
  for (int64_t p = 0; p < n_kv; ++p) {
    kv_dequantize(v.type, v.row(p), v.first, head_dim, row);
    for (int64_t i = 0; i < n_q; ++i) {
      const float w = scores[i * n_kv + p];
      float* oi = out + i * out_stride;
      for (int64_t d = 0; d < head_dim; ++d) oi[d] += w * row[d];
    }
  }
}

}  // namespace detail

void attention_group(const float* q, int64_t q_stride, int64_t n_q, const KvRows& k, const KvRows& v, int64_t n_kv,
                     int64_t head_dim, float scale, float softcap, float* scores, float* out, int64_t out_stride) {
  const bool aligned = head_dim % kKvBlock == 0 && k.first % kKvBlock == 0 && v.first % kKvBlock == 0;
  const bool has_avx2 = active_simd_level() >= SimdLevel::Avx2;
  if (!aligned && has_avx2 && head_dim % 8 == 0 && k.type == KvType::F16 && v.type == KvType::F16) {
    // Heads off the 32-value grid (stories260K's 8): F16 per query head, without the fused path.
    for (int64_t i = 0; i < n_q; ++i) {
      detail::attention_head_f16_avx2(q + i * q_stride, k, v, n_kv, head_dim, scale, scores, out + i * out_stride,
                                      softcap);
    }
    return;
  }
  const bool avx2 = aligned && has_avx2;
  for (int64_t i0 = 0; i0 < n_q; i0 += 8) {
    const int64_t n = std::min<int64_t>(8, n_q - i0);
    const float* qi = q + i0 * q_stride;
    float* oi = out + i0 * out_stride;
    if (avx2) {
      detail::attention_group_fused_avx2(qi, q_stride, n, k, v, n_kv, head_dim, scale, softcap, scores, oi, out_stride);
    } else {
      detail::attention_group_fused_scalar(qi, q_stride, n, k, v, n_kv, head_dim, scale, softcap, scores, oi,
                                           out_stride);
    }
  }
}

}  // namespace inferscope::kernels
