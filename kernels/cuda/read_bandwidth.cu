#include "kernels/cuda/read_bandwidth.h"

#include "kernels/cuda/launch.h"

namespace inferscope::cuda_kernels {
namespace {

constexpr int kUnroll = 4;  // loads in flight per thread per step

// Grid-stride over n float4s, kUnroll at a time; each block reduces its threads' sums in shared
// memory and writes one partial sum.
__global__ void read_sum(const float4* __restrict__ data, std::size_t n, float* __restrict__ partial) {
  INFERSCOPE_DYNAMIC_SHARED(float, block_sums);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  float sum = 0.0f;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = data[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) sum += v[u].x + v[u].y + v[u].z + v[u].w;
  }
  for (; i < n; i += stride) sum += data[i].x + data[i].y + data[i].z + data[i].w;
  block_sums[threadIdx.x] = sum;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) block_sums[threadIdx.x] += block_sums[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = block_sums[0];
}

}  // namespace

cudaError_t launch_read_sum(const float4* data, std::size_t n, float* partial, int blocks, int threads,
                            cudaStream_t stream) {
  return launch_kernel(read_sum, dim3(blocks), dim3(threads), threads * sizeof(float), stream, data, n, partial);
}

}  // namespace inferscope::cuda_kernels
