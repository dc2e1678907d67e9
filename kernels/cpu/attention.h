// Scaled dot-product attention over the KV cache's rows, for the query heads of one GQA group
// and one or more tokens. Masking is the caller's choice of rows: causal attention passes
// positions 0..pos, a sliding
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

// Queries per block of the tiled kernel: their scores for every position are kept in scratch.
constexpr int64_t kAttentionQueryBlock = 32;
// Positions per tile of the tiled kernel.
constexpr int64_t kAttentionTile = 64;

// Scratch floats one attention_group or attention_tokens call needs for rows of up to n_kv
// positions and heads of head_dim values.
constexpr int64_t attention_scratch_floats(int64_t n_kv, int64_t head_dim) {
  return kAttentionQueryBlock * (n_kv + 16) + (2 * kAttentionTile + kAttentionQueryBlock) * head_dim + 64;
}

// The query heads of one GQA group (they read the same KV head) for n_tok tokens of one
// sequence (they read the same rows): head i of token j at q + j * q_token_stride + i * q_stride,
// its output at out + j * out_token_stride + i * out_stride ([head_dim] F32 each). Token j sees
// rows [0, n_kv[j]) (n_kv[j] >= 1).
struct AttentionQueries {
  const float* q = nullptr;
  int64_t q_stride = 0, q_token_stride = 0;
  int64_t n_head = 0, n_tok = 0;
  const int64_t* n_kv = nullptr;
  float* out = nullptr;
  int64_t out_stride = 0, out_token_stride = 0;
  // gpt-oss: head i's learned sink logit, sinks[i] (softmax_with_sink); null: none.
  const float* sinks = nullptr;
};

// Attention of every query of `a`: out = softmax(cap(scale * q . K^T)) . V over the query's
// rows; cap(s) = softcap * tanh(s / softcap) when softcap > 0 (Gemma 2), else s; with a.sinks
// the softmax's sum has the head's sink term too (softmax_with_sink). scratch:
// attention_scratch_floats(max n_kv, head_dim) floats. Like llama.cpp's F16 path, q is rounded
// to F16 when K is F16 and the softmax weights when V is F16, so F16 logits agree with its
// reference outputs to ~1e-4. The softmax is softmax()'s (exact, two passes).
// AVX2 (attention_tiled_avx2) when head_dim % 8 == 0 and the heads of quantized K or V lie on
// the 32-value block grid: the queries of up to kAttentionQueryBlock heads share each tile of
// kAttentionTile decoded K and V rows, and every output depends only on its own query and rows
// (the same bits alone or among other tokens). Otherwise the scalar reference, 8 heads at a time.
// Preconditions: head_dim <= 1024 and even; quantized: the head lies in the row.
void attention_tokens(const AttentionQueries& a, const KvRows& k, const KvRows& v, int64_t head_dim, float scale,
                      float softcap, float* scratch);

// attention_tokens for one token: the n_q query heads at q + i * q_stride, their outputs at
// out + i * out_stride, over n_kv rows.
void attention_group(const float* q, int64_t q_stride, int64_t n_q, const KvRows& k, const KvRows& v, int64_t n_kv,
                     int64_t head_dim, float scale, float softcap, float* scratch, float* out, int64_t out_stride);

namespace detail {
// The scalar path of attention_group for at most 8 queries (n_q <= 8); scores: 8 * n_kv floats.
// sinks: the n_q heads' sink logits, or null.
void attention_group_fused_scalar(const float* q, int64_t q_stride, int64_t n_q, const KvRows& k, const KvRows& v,
                                  int64_t n_kv, int64_t head_dim, float scale, float softcap, float* scores,
                                  float* out, int64_t out_stride, const float* sinks = nullptr);
// The AVX2 path of attention_tokens. Preconditions: head_dim % 8 == 0; for a quantized K or V
// its first % 32 == 0 and head_dim % 32 == 0.
void attention_tiled_avx2(const AttentionQueries& a, const KvRows& k, const KvRows& v, int64_t head_dim, float scale,
                          float softcap, float* scratch);

// The AVX-512 register blocks of attention_tiled_avx2 (the same operations per lane, so the
// same bits), used where the CPU has them. Scores: s[r * s_stride + j] = scale * q_r . kt[.][j]
// for r < qr <= 6 (q_r at q + r * head_dim), j < n16 (a multiple of 16; kt rows
// kAttentionTile apart). Values: o[r][d] += sum_{p < n} w[r * w_stride + p] * row p's value d
// for the dimensions d in [0, done) that 16-wide vectors cover; returns done.
void tiled_scores_avx512(int qr, const float* q, int64_t head_dim, const float* kt, int64_t n16, float scale, float* s,
                         int64_t s_stride);
int64_t tiled_values_f32_avx512(int qr, const float* w, int64_t w_stride, const float* rows, int64_t head_dim,
                                int64_t n, float* const* o);
int64_t tiled_values_f16_avx512(int qr, const float* w, int64_t w_stride, const uint8_t* const* heads,
                                int64_t head_dim, int64_t n, float* const* o);

// One query head over F16 rows the way llama.cpp's F16-cache path computes it, one loop at a
// time (the reference the tests hold attention_group and the Vulkan shader to): q: [head_dim];
// k, v: row p at k + p * kv_stride; scores: n_kv floats; out: [head_dim].
// Preconditions: n_kv >= 1, head_dim % 2 == 0, head_dim <= 1024.
void attention_head_f16_scalar(const float* q, const uint16_t* k, const uint16_t* v, int64_t kv_stride, int64_t n_kv,
                               int64_t head_dim, float scale, float* scores, float* out, float softcap = 0.0f);
}  // namespace detail

}  // namespace inferscope::kernels
