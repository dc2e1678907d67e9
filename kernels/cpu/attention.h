// Scaled dot-product attention of one query head over an F16 KV cache. Masking is the
// caller's choice of rows: causal attention passes positions 0..pos, a sliding window of w
// passes k, v advanced to position pos - w + 1 (never below 0) and the rows from there.
#pragma once

#include <cstdint>

namespace inferscope::kernels {

// q: [head_dim] F32. k, v: n_kv rows, row p at k + p * kv_stride (F16), head_dim values each.
// scores: scratch of n_kv floats. out: [head_dim] F32 = softmax(cap(scale * q.K^T)) . V, where
// cap(s) = softcap * tanh(s / softcap) when softcap > 0 (Gemma 2), else s.
// Like llama.cpp's F16-cache path, q and the softmax weights are rounded to F16 before they
// meet the F16 keys and values, so logits agree with its reference outputs to ~1e-4.
// Preconditions: n_kv >= 1, head_dim % 2 == 0, head_dim <= 1024.
void attention_head_f16(const float* q, const uint16_t* k, const uint16_t* v, int64_t kv_stride, int64_t n_kv,
                        int64_t head_dim, float scale, float* scores, float* out, float softcap = 0.0f);

namespace detail {
void attention_head_f16_scalar(const float* q, const uint16_t* k, const uint16_t* v, int64_t kv_stride, int64_t n_kv,
                               int64_t head_dim, float scale, float* scores, float* out, float softcap = 0.0f);
void attention_head_f16_avx2(const float* q, const uint16_t* k, const uint16_t* v, int64_t kv_stride, int64_t n_kv,
                             int64_t head_dim, float scale, float* scores, float* out, float softcap = 0.0f);
}  // namespace detail

}  // namespace inferscope::kernels
