// Attention over the paged, possibly quantized KV cache on CUDA (attention.cu), the writes of
// K and V rows into it (kv_store.cu) and the re-rotation of cached keys (kv_rotate.cu). Rows
// and pools as kernels/cuda/chunk_rows.h describes; the KV row formats are the CPU's
// (kernels/cpu/kv_quant.h: F16, Q8_0, Q4_0, NF4, INT4), decoded in registers.
// All pointers are device memory; launches go on `stream` and return the launch's error.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/chunk_rows.h"
#include "kernels/cuda/rope_angles.h"

namespace inferscope::cuda_kernels {

// Encodes k and v ([rows][n_embd_kv] F32 each) as rows of k_pool.type and v_pool.type,
// byte-identical to kernels::kv_quantize_row, into each row's position (ChunkRows::pos) through
// its block table. Precondition: no two rows write the same pool row.
cudaError_t launch_kv_store(const float* k, const float* v, const KvPool& k_pool, const KvPool& v_pool,
                            int64_t n_embd_kv, const ChunkRows& chunk, int64_t rows, cudaStream_t stream);

struct AttentionShapeArgs {
  int64_t n_head = 0, n_head_kv = 0;  // n_head_kv divides n_head (GQA)
  int64_t head_dim = 0;               // even, <= 512 (over 256: walked in two parts)
  float scale = 1.0f;
  float softcap = 0.0f;  // > 0: scores become softcap * tanh(score / softcap)
  int64_t window = 0;    // > 0: the row at pos sees j > pos - window, or j < sinks
  int64_t sinks = 0;
  // gpt-oss's learned sinks: [n_head] F32 logits (device memory), one more term exp(sink[h] -
  // max) in each head's softmax sum that adds no value; null: none.
  const float* sink_logits = nullptr;
};

// Floats of scratch launch_attention needs for `rows` rows over at most max_kv positions.
int64_t attention_scratch_floats(const AttentionShapeArgs& shape, int64_t rows, int64_t max_kv);

// out[r][h] = softmax(cap(scale * q[r][h] . K^T)) . V over the positions j < n_kv[r] of row r's
// sequence that the window leaves visible, h < n_head; q, out: [rows][n_head * head_dim] F32.
// Flash attention: K and V read in tiles with an online softmax; for few rows (decode) the
// position range is split across blocks (split-K) and reduced in a second kernel, using
// `scratch`. The grid depends only on rows and max_kv (an upper bound of every n_kv[r]), not on
// the positions, so one captured launch serves every step that keeps under max_kv.
cudaError_t launch_attention(const float* q, const KvPool& k_pool, const KvPool& v_pool, const ChunkRows& chunk,
                             int64_t rows, int64_t max_kv, const AttentionShapeArgs& shape, float* out, float* scratch,
                             cudaStream_t stream);

// Re-rotates the keys of every row of the listed blocks (blocks: [n_blocks] pool block ids,
// 2^k_pool.block_shift rows each) by `delta` positions: a key rotated for position p becomes
// the key of p + delta (RoPE angles of `angles` with attn_factor 1, freq_factors [n_rot/2] or
// null), re-encoded in the pool's type. Heads: n_head_kv of head_dim values per row, the first
// n_rot of each rotated (neox: pairs (i, i + n_rot/2), else (2i, 2i + 1)).
cudaError_t launch_kv_rotate(const KvPool& k_pool, const int32_t* blocks, int64_t n_blocks, int64_t n_head_kv,
                             int64_t head_dim, int64_t n_rot, bool neox, const RopeAngleParams& angles,
                             const float* freq_factors, int64_t delta, cudaStream_t stream);

}  // namespace inferscope::cuda_kernels
