// attention_tokens and attention_group: the dispatch, and the scalar path for groups of up to 8
// queries (AVX2 in attention_tiled_avx2.cpp).
#include <algorithm>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/formats/fp16.h"
#include "kernels/cpu/ops.h"

namespace inferscope::kernels {

namespace detail {

void attention_group_fused_scalar(const float* q, int64_t q_stride, int64_t n_q, const KvRows& k, const KvRows& v,
                                  int64_t n_kv, int64_t head_dim, float scale, float softcap, float* scores,
                                  float* out, int64_t out_stride, const float* sinks) {
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
    if (sinks != nullptr) {
      softmax_with_sink(scores + i * n_kv, n_kv, sinks[i]);
    } else {
      softmax(scores + i * n_kv, n_kv);
    }
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

namespace {

// Whether the AVX2 tiled kernel can read the head of `rows`.
bool tiled_reads(const KvRows& rows, int64_t head_dim) {
  if (rows.type == KvType::F16) return rows.first % 8 == 0;
  return head_dim % kKvBlock == 0 && rows.first % kKvBlock == 0;
}

}  // namespace

void attention_tokens(const AttentionQueries& a, const KvRows& k, const KvRows& v, int64_t head_dim, float scale,
                      float softcap, float* scratch) {
  if (active_simd_level() >= SimdLevel::Avx2 && head_dim % 8 == 0 && tiled_reads(k, head_dim) &&
      tiled_reads(v, head_dim)) {
    detail::attention_tiled_avx2(a, k, v, head_dim, scale, softcap, scratch);
    return;
  }
  for (int64_t j = 0; j < a.n_tok; ++j) {
    for (int64_t i0 = 0; i0 < a.n_head; i0 += 8) {
      const int64_t n = std::min<int64_t>(8, a.n_head - i0);
      detail::attention_group_fused_scalar(a.q + j * a.q_token_stride + i0 * a.q_stride, a.q_stride, n, k, v, a.n_kv[j],
                                           head_dim, scale, softcap, scratch,
                                           a.out + j * a.out_token_stride + i0 * a.out_stride, a.out_stride,
                                           a.sinks ? a.sinks + i0 : nullptr);
    }
  }
}

void attention_group(const float* q, int64_t q_stride, int64_t n_q, const KvRows& k, const KvRows& v, int64_t n_kv,
                     int64_t head_dim, float scale, float softcap, float* scratch, float* out, int64_t out_stride) {
  const AttentionQueries a{q, q_stride, 0, n_q, 1, &n_kv, out, out_stride, 0};
  attention_tokens(a, k, v, head_dim, scale, softcap, scratch);
}

}  // namespace inferscope::kernels
