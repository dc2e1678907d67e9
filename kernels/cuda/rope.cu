#include "kernels/cuda/rope.h"

#include <algorithm>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/rope_angles.cuh"

namespace inferscope::cuda_kernels {
namespace {

constexpr int kMaxThreads = 256;  // threads per row, fewer when a row has fewer pairs

// One block per row: the row's n_rot/2 angles into shared memory, then every pair of every q and
// k head of the row rotated with them. Each rotation is two rounded products and one rounded sum
// per output (never fused), as the CPU's rope_apply computes it.
// Dynamic shared memory: n_rot floats (cos, then sin).
__global__ void rope_rows(float* q, float* k, const int32_t* __restrict__ pos, RopeShape shape,
                          RopeAngleParams angles, const float* __restrict__ freq_factors) {
  INFERSCOPE_DYNAMIC_SHARED(float, cos_sin);
  const int half = static_cast<int>(shape.n_rot / 2);
  float* cos_s = cos_sin;
  float* sin_s = cos_sin + half;
  const int64_t row = blockIdx.x;
  const auto position = static_cast<float>(pos[row]);
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    rope_pair_cos_sin(position, i, angles, freq_factors, &cos_s[i], &sin_s[i]);
  }
  __syncthreads();

  const int n_head = static_cast<int>(shape.n_head);
  const float temperature = shape.q_temp_beta != 0.0f
                                ? 1.0f + shape.q_temp_beta * logf(floorf(position / shape.q_temp_floor) + 1.0f)
                                : 1.0f;
  const int pairs = static_cast<int>(shape.n_head + shape.n_head_kv) * half;
  for (int p = threadIdx.x; p < pairs; p += blockDim.x) {
    const int head = p / half, i = p % half;
    float* v = head < n_head ? q + (row * shape.n_head + head) * shape.head_dim
                             : k + (row * shape.n_head_kv + (head - n_head)) * shape.head_dim;
    const int ia = shape.neox ? i : 2 * i;
    const int ib = shape.neox ? i + half : 2 * i + 1;
    const float a = v[ia], b = v[ib], c = cos_s[i], s = sin_s[i];
    const float t = head < n_head ? temperature : 1.0f;
    v[ia] = __fmul_rn(__fadd_rn(__fmul_rn(a, c), -__fmul_rn(b, s)), t);
    v[ib] = __fmul_rn(__fadd_rn(__fmul_rn(a, s), __fmul_rn(b, c)), t);
  }
}

}  // namespace

cudaError_t launch_rope(float* q, float* k, const ChunkRows& chunk, int64_t rows, const RopeShape& shape,
                        const RopeAngleParams& angles, const float* freq_factors, cudaStream_t stream) {
  const int64_t pairs = (shape.n_head + shape.n_head_kv) * (shape.n_rot / 2);
  if (rows == 0 || pairs == 0) return cudaSuccess;
  const auto threads = static_cast<unsigned>(std::min<int64_t>(kMaxThreads, (pairs + 31) / 32 * 32));
  return launch_kernel(rope_rows, dim3(static_cast<unsigned>(rows)), dim3(threads), shape.n_rot * sizeof(float),
                       stream, q, k, chunk.pos, shape, angles, freq_factors);
}

}  // namespace inferscope::cuda_kernels
