#include "kernels/cuda/carried_rows.h"

#include "kernels/cuda/launch.h"

namespace inferscope::cuda_kernels {
namespace {

constexpr int kThreads = 128;

// The chunk row before t of t's slot, or -1.
__device__ __forceinline__ int64_t previous_of_slot(ChunkRows rows, int64_t t) {
  for (int64_t p = t - 1; p >= 0; --p) {
    if (rows.slot[p] == rows.slot[t]) return p;
  }
  return -1;
}

__device__ __forceinline__ bool last_of_slot(ChunkRows rows, int64_t t, int64_t n) {
  for (int64_t p = t + 1; p < n; ++p) {
    if (rows.slot[p] == rows.slot[t]) return false;
  }
  return true;
}

__global__ void gather_carried_rows(const float* in, float* out, const float* carried, int64_t state_stride,
                                    ChunkRows rows, int64_t width) {
  const int64_t t = blockIdx.x;
  const int64_t p = previous_of_slot(rows, t);
  const float* from = p >= 0 ? in + p * width : carried + rows.slot[t] * state_stride;
  const bool zero = rows.pos[t] == 0;
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) out[t * width + i] = zero ? 0.0f : from[i];
}

__global__ void keep_carried_rows(const float* in, float* carried, float* kept, int64_t state_stride,
                                  ChunkRows rows, int64_t n, int64_t width, bool keep_last, int64_t n_kept) {
  const int64_t t = blockIdx.x;
  const float* row = in + t * width;
  if (keep_last && last_of_slot(rows, t, n)) {
    float* to = carried + rows.slot[t] * state_stride;
    for (int64_t i = threadIdx.x; i < width; i += blockDim.x) to[i] = row[i];
  }
  if (t < n_kept) {
    float* to = kept + t * state_stride;
    for (int64_t i = threadIdx.x; i < width; i += blockDim.x) to[i] = row[i];
  }
}

}  // namespace

cudaError_t launch_gather_carried(const float* in, float* out, const float* carried, int64_t state_stride,
                                  ChunkRows rows, int64_t n, int64_t width, cudaStream_t stream) {
  if (n == 0 || width == 0) return cudaSuccess;
  return launch_kernel(gather_carried_rows, dim3(static_cast<unsigned>(n)), dim3(kThreads), 0, stream, in, out,
                       carried, state_stride, rows, width);
}

cudaError_t launch_keep_carried(const float* in, float* carried, float* kept, int64_t state_stride, ChunkRows rows,
                                int64_t n, int64_t width, bool keep_last, int64_t n_kept, cudaStream_t stream) {
  if (n == 0 || width == 0 || (!keep_last && n_kept == 0)) return cudaSuccess;
  return launch_kernel(keep_carried_rows, dim3(static_cast<unsigned>(n)), dim3(kThreads), 0, stream, in, carried,
                       kept, state_stride, rows, n, width, keep_last, n_kept);
}

}  // namespace inferscope::cuda_kernels
