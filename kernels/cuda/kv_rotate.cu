// launch_kv_rotate (attention.h): one thread block per pool row of the listed blocks. It puts
// the n_rot/2 angles of `delta` in shared memory, decodes the row into shared memory with each
// head's first n_rot values rotated (kernels::rope_apply's operations, unfused), then encodes it
// back in place (kv_rows.cuh): every thread has finished reading the row before any writes.
#include "kernels/cuda/attention.h"
#include "kernels/cuda/kv_rows.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/rope_angles.cuh"

namespace inferscope::cuda_kernels {
namespace {

constexpr int kRotateThreads = 128;
constexpr int64_t kMaxRotateSharedBytes = 48 * 1024;  // without opting in to more

struct RotateShape {
  int n_head_kv = 0, head_dim = 0, n_rot = 0;
  bool neox = false;
};

// Dynamic shared memory: n_rot/2 cosines, n_rot/2 sines, then the row's n_head_kv * head_dim
// values. blockIdx.x: the entry of `blocks`; blockIdx.y: the row within that pool block.
__global__ void __launch_bounds__(kRotateThreads)
    kv_rotate_rows(KvPool pool, const int32_t* blocks, RotateShape shape, RopeAngleParams angles,
                   const float* freq_factors, float delta) {
  INFERSCOPE_DYNAMIC_SHARED(float, smem);
  __shared__ float nf4[kNf4LevelCount];
  const int half_rot = shape.n_rot / 2, half_head = shape.head_dim / 2;
  float* cos_s = smem;
  float* sin_s = smem + half_rot;
  float* values = smem + shape.n_rot;
  kv_load_nf4_levels(nf4);
  for (int i = threadIdx.x; i < half_rot; i += blockDim.x) {
    rope_pair_cos_sin(delta, i, angles, freq_factors, &cos_s[i], &sin_s[i]);
  }
  __syncthreads();

  const int64_t pool_row = (static_cast<int64_t>(blocks[blockIdx.x]) << pool.block_shift) + blockIdx.y;
  uint8_t* row = pool.data + pool_row * pool.row_bytes;
  for (int item = threadIdx.x; item < shape.n_head_kv * half_head; item += blockDim.x) {
    const int head = item / half_head, i = item % half_head;
    const bool rotated = i < half_rot;
    // Rotated pair i, or the unrotated values n_rot + 2 (i - half_rot) and the next.
    const int ia = head * shape.head_dim + (rotated ? (shape.neox ? i : 2 * i) : shape.n_rot + 2 * (i - half_rot));
    const int ib = rotated && shape.neox ? ia + half_rot : ia + 1;
    const float a = kv_value(pool.type, row, ia, nf4), b = kv_value(pool.type, row, ib, nf4);
    if (rotated) {
      const float c = cos_s[i], s = sin_s[i];
      values[ia] = __fadd_rn(__fmul_rn(a, c), -__fmul_rn(b, s));
      values[ib] = __fadd_rn(__fmul_rn(a, s), __fmul_rn(b, c));
    } else {
      values[ia] = a;
      values[ib] = b;
    }
  }
  __syncthreads();
  kv_encode_row(pool.type, values, row, shape.n_head_kv * shape.head_dim, nf4);
}

}  // namespace

cudaError_t launch_kv_rotate(const KvPool& k_pool, const int32_t* blocks, int64_t n_blocks, int64_t n_head_kv,
                             int64_t head_dim, int64_t n_rot, bool neox, const RopeAngleParams& angles,
                             const float* freq_factors, int64_t delta, cudaStream_t stream) {
  if (n_blocks == 0) return cudaSuccess;
  const int64_t n_embd_kv = n_head_kv * head_dim;
  const int64_t shared_bytes = (n_rot + n_embd_kv) * static_cast<int64_t>(sizeof(float));
  if (head_dim % 2 != 0 || n_rot % 2 != 0 || n_rot > head_dim || n_embd_kv % kv_granule(k_pool.type) != 0 ||
      shared_bytes > kMaxRotateSharedBytes) {
    return cudaErrorInvalidValue;
  }
  RopeAngleParams pure = angles;
  pure.attn_factor = 1.0f;
  const RotateShape shape{static_cast<int>(n_head_kv), static_cast<int>(head_dim), static_cast<int>(n_rot), neox};
  return launch_kernel(kv_rotate_rows, dim3(static_cast<unsigned>(n_blocks), 1u << k_pool.block_shift),
                       dim3(kRotateThreads), static_cast<std::size_t>(shared_bytes), stream, k_pool, blocks, shape, pure,
                       freq_factors, static_cast<float>(delta));
}

}  // namespace inferscope::cuda_kernels
