// Sums across a warp and across a thread block (device functions for kernels/cuda/*.cu).
#pragma once

#include <cuda_runtime.h>

namespace inferscope::cuda_kernels {

// The sum of v over the 32 lanes, in every lane.
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// The sum of v over the block's threads, in every thread. blockDim.x: a multiple of 32, at most
// 1024; `scratch`: 32 floats of shared memory, free again once every thread has returned.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  v = warp_sum(v);
  __syncthreads();  // scratch may still be read by an earlier block_sum
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : 0.0f;
  return warp_sum(v);
}

}  // namespace inferscope::cuda_kernels
