// A hybrid model's Gated DeltaNet layers on CUDA (delta_net.cu): the counterparts of
// kernels/cpu/delta_net.h for CudaOps::ssm_conv and delta_net, over all the rows of a chunk in
// one launch each. Row r belongs to the sequence in slot rows.slot[r] at position rows.pos[r]
// (chunk_rows.h, on the device: a decode step replayed as a CUDA graph reads each step's);
// a row at position 0 starts from a zero state, any other goes on from the state its slot's
// previous row left (rows of one slot in order, other slots' rows between them or not).
// A layer's states: `states` + slot * state_stride floats for each slot, in the layout of
// engine/kv/recurrent_layout.h (the caller passes the layer's part).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/chunk_rows.h"

namespace inferscope::cuda_kernels {

// Where a verification keeps the states its first rows leave (Chunk::keep_row_states): the
// state after chunk row r < rows at states + r * state_stride (the layer's part of the first
// row state, the same stride as the slots'). rows == 0: none kept.
struct RowStates {
  float* states = nullptr;
  int64_t rows = 0;
};

// What the kernels hold in registers (engine/backend/gpu_delta_net_limits.h asks no more).
constexpr int64_t kMaxConvTaps = 8;
constexpr int64_t kMaxDeltaNetHeadDim = 256;

// Gated DeltaNet heads (DeltaNetShape, engine/model/model_config.h): n_k_heads key (and query)
// heads and n_v_heads value heads of head_dim values; value head h reads key head
// h / (n_v_heads / n_k_heads) when grouped, else h % n_k_heads.
// A conv row holds the q heads, the k heads, then the v heads: 2 * n_k_heads + n_v_heads heads
// of head_dim values (its channels); an output row, the n_v_heads value heads.
struct DeltaNetHeads {
  int64_t n_k_heads = 0, n_v_heads = 0, head_dim = 0;
  bool grouped = false;
};

// x ([n][channels], in place) = silu of each channel's causal convolution over `taps` taps
// (kernels::causal_conv_silu): the inputs before a row come from its slot's state
// ([taps - 1][channels] at states + slot * state_stride, oldest first), left holding the last
// inputs, and the inputs after each of the first kept.rows rows in kept. kernel: [channels][taps].
// One thread per channel. Precondition: 2 <= taps <= kMaxConvTaps.
cudaError_t launch_ssm_conv(float* x, const float* kernel, float* states, int64_t state_stride, ChunkRows rows,
                            int64_t n, int64_t channels, int64_t taps, RowStates kept, cudaStream_t stream);

// In place for n rows (kernels::delta_net_prepare): conv rows ([n][channels]) have their
// q and k heads l2-normalized (x / max(|x|, eps)), q also scaled by 1/sqrt(head_dim); alpha
// ([n][n_v_heads]) becomes softplus(alpha + dt[h]) * a[h], beta sigmoid(beta). One block per row.
cudaError_t launch_delta_net_prepare(float* conv, float* alpha, float* beta, const float* dt, const float* a,
                                     DeltaNetHeads heads, int64_t n, float eps, cudaStream_t stream);

// out ([n][n_v_heads * head_dim]) = the recurrence over the prepared rows, one by one
// (kernels::delta_net_steps per value head), from and into each row's slot's matrices
// ([n_v_heads][head_dim][head_dim] at states + slot * state_stride), and the matrices after each of
// the first kept.rows rows in kept. g, beta: [n][n_v_heads].
// A warp per value row of a head's state (the rows are independent), its lanes over the keys.
// Preconditions: head_dim <= kMaxDeltaNetHeadDim; n_v_heads a multiple of n_k_heads.
cudaError_t launch_delta_net(const float* conv, const float* g, const float* beta, float* out, float* states,
                             int64_t state_stride, ChunkRows rows, DeltaNetHeads heads, int64_t n, RowStates kept,
                             cudaStream_t stream);

}  // namespace inferscope::cuda_kernels
