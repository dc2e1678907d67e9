// The MTP block's hidden rows on CUDA (carried_rows.cu; CudaOps::carry_hidden, the counterpart
// of CpuOps::carry_hidden): each position pairs with the model's normalized hidden row of the
// position before it, which for a slot's first row in a chunk is the row its slot carries from
// the chunk before (RecurrentLayout::carry_floats, in the slot's state). Rows find their slot
// and position on the device (chunk_rows.h), so a captured decode step replays for any slot.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/chunk_rows.h"

namespace inferscope::cuda_kernels {

// out[t] ([n][width]) = in[p] for p the last earlier chunk row of t's slot, else the slot's
// carried row (carried + slot * state_stride), zeros for a row at position 0. One block per
// row. Precondition: out and in apart, or no slot with two rows in the chunk.
cudaError_t launch_gather_carried(const float* in, float* out, const float* carried, int64_t state_stride,
                                  ChunkRows rows, int64_t n, int64_t width, cudaStream_t stream);

// With keep_last, each slot's last chunk row of in over its carried row; and in's rows t <
// n_kept over kept + t * state_stride (a verification's row states' carried rows). After
// launch_gather_carried. One block per row.
cudaError_t launch_keep_carried(const float* in, float* carried, float* kept, int64_t state_stride, ChunkRows rows,
                                int64_t n, int64_t width, bool keep_last, int64_t n_kept, cudaStream_t stream);

}  // namespace inferscope::cuda_kernels
