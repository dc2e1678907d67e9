// Rotary position embedding of a chunk's queries and keys on CUDA (rope.cu): the counterpart
// of kernels::rope_angles + kernels::rope_apply, each row at its own position (ChunkRows::pos).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/chunk_rows.h"
#include "kernels/cuda/rope_angles.h"

namespace inferscope::cuda_kernels {

struct RopeShape {
  int64_t n_head = 0;     // query heads per row of q
  int64_t n_head_kv = 0;  // key heads per row of k
  int64_t head_dim = 0;
  int64_t n_rot = 0;      // even, <= head_dim
  bool neox = false;      // pairs (i, i + n_rot/2) instead of (2i, 2i+1)
  // Queries times 1 + beta ln(floor(pos / floor) + 1) (kernels::query_temperature); 0: off.
  float q_temp_beta = 0.0f;
  float q_temp_floor = 0.0f;
};

// Rotates q [rows][n_head * head_dim] and k [rows][n_head_kv * head_dim] in place, row r at
// position chunk.pos[r]. freq_factors: [n_rot/2] device floats or null.
cudaError_t launch_rope(float* q, float* k, const ChunkRows& chunk, int64_t rows, const RopeShape& shape,
                        const RopeAngleParams& angles, const float* freq_factors, cudaStream_t stream);

}  // namespace inferscope::cuda_kernels
