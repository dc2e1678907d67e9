// Scaled dot-product attention over the KV cache's rows, for the query heads of one GQA group.
// Masking is the caller's choice of rows: causal attention passes positions 0..pos, a sliding
// window of w passes the rows from position pos - w + 1 (never below 0), and a window with
// attention sinks the first `sinks` positions followed by the window's.
#pragma once

#include <cstdint>

#include "kernels/cpu/kv_quant.h"

namespace inferscope::kernels {

// Rows of one layer's K or V cache as attention reads them. Each row encodes a whole position
// (every KV head) as `type`; the head read is values [first, first + head_dim) of each row.
// Row p is the cache's position p for p < sinks, else start + p (sinks 0: always start + p; a
// window with sinks passes start = its first position - sinks). Contiguous (blocks null): position x starts at
// data + x * row_bytes. Paged: position x is row x % B of block blocks[x / B], B = 1 << block_shift
// rows a block, and block b's rows start at data + b * B * row_bytes.
struct KvRows {
  KvType type = KvType::F16;
  const uint8_t* data = nullptr;
  int64_t row_bytes = 0;
  int64_t first = 0;
  const int32_t* blocks = nullptr;
  int block_shift = 0;
  int64_t start = 0;
  int64_t sinks = 0;

  const uint8_t* row(int64_t p) const {
    const int64_t x = p < sinks ? p : start + p;
    if (!blocks) return data + x * row_bytes;
    const int64_t mask = (int64_t(1) << block_shift) - 1;
    return data + ((static_cast<int64_t>(blocks[x >> block_shift]) << block_shift) + (x & mask)) * row_bytes;
  }
};

// Scratch floats attention_group needs per KV position.
constexpr int64_t kAttentionScratchPerPosition = 16;

// Attention of the n_q query heads of one GQA group (they read the same KV head) over n_kv
// cached rows: out_i = softmax(cap(scale * q_i . K^T)) . V for i < n_q, q_i at q + i * q_stride
// and out_i at out + i * out_stride ([head_dim] F32 each); cap(s) = softcap * tanh(s / softcap)
// when softcap > 0 (Gemma 2), else s. scores: scratch of kAttentionScratchPerPosition * n_kv floats.
// The rows are read fused: each 32-value block of K and V is decoded once, in registers, for all
// the queries of the group (never into a copy of the cache); scores and the weighted sum are
// F32 against the decoded values (d * code), the softmax is softmax()'s. Like llama.cpp's F16
// path, q is rounded to F16 when K is F16 and the softmax weights when V is F16, so F16 logits
// agree with its reference outputs to ~1e-4. AVX2 when head_dim and the heads' first values are
// multiples of 32; else F16 K and V run per query head on AVX2 (head_dim % 8 == 0), and the
// other types the scalar reference (any even head_dim).
// Preconditions: n_kv >= 1, head_dim <= 1024 and even; quantized: the head lies in the row.
void attention_group(const float* q, int64_t q_stride, int64_t n_q, const KvRows& k, const KvRows& v, int64_t n_kv,
                     int64_t head_dim, float scale, float softcap, float* scores, float* out, int64_t out_stride);

namespace detail {
// The fused path of attention_group for at most 8 queries (n_q <= 8).
void attention_group_fused_scalar(const float* q, int64_t q_stride, int64_t n_q, const KvRows& k, const KvRows& v,
                                  int64_t n_kv, int64_t head_dim, float scale, float softcap, float* scores,
                                  float* out, int64_t out_stride);
// Precondition: head_dim % 32 == 0, k.first % 32 == 0, v.first % 32 == 0.
void attention_group_fused_avx2(const float* q, int64_t q_stride, int64_t n_q, const KvRows& k, const KvRows& v,
                                int64_t n_kv, int64_t head_dim, float scale, float softcap, float* scores,
                                float* out, int64_t out_stride);

// One query head over F16 rows the way llama.cpp's F16-cache path computes it, one loop at a
// time (the reference the tests hold attention_group and the Vulkan shader to): q: [head_dim];
// k, v: row p at k + p * kv_stride; scores: n_kv floats; out: [head_dim].
// Preconditions: n_kv >= 1, head_dim % 2 == 0, head_dim <= 1024.
void attention_head_f16_scalar(const float* q, const uint16_t* k, const uint16_t* v, int64_t kv_stride, int64_t n_kv,
                               int64_t head_dim, float scale, float* scores, float* out, float softcap = 0.0f);
// The same with AVX2 + F16C (8 positions' scores at a time) over F16 rows k, v (contiguous or
// paged). Precondition: head_dim % 8 == 0.
void attention_head_f16_avx2(const float* q, const KvRows& k, const KvRows& v, int64_t n_kv, int64_t head_dim,
                             float scale, float* scores, float* out, float softcap = 0.0f);
}  // namespace detail

}  // namespace inferscope::kernels
