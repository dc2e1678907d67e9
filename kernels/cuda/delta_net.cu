#include "kernels/cuda/delta_net.h"

#include <math.h>

#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/launch.h"

namespace inferscope::cuda_kernels {
namespace {

constexpr int kConvThreads = 128;
constexpr int kRowThreads = 128;           // delta_net_prepare: per row
constexpr int kWarpsPerBlock = 4;          // delta_net: a state row per warp
constexpr int kKeysPerLane = kMaxDeltaNetHeadDim / 32;

__device__ __forceinline__ int64_t key_dim(const DeltaNetHeads& h) { return h.n_k_heads * h.head_dim; }
__device__ __forceinline__ int64_t value_dim(const DeltaNetHeads& h) { return h.n_v_heads * h.head_dim; }
__device__ __forceinline__ int64_t channels(const DeltaNetHeads& h) { return 2 * key_dim(h) + value_dim(h); }

// Whether row t starts a new stretch of its slot's state in a thread walking the rows in order:
// the first row, another slot than the previous row's, or position 0.
__device__ __forceinline__ bool loads_state(ChunkRows rows, int64_t t) {
  return t == 0 || rows.slot[t] != rows.slot[t - 1] || rows.pos[t] == 0;
}

__global__ void ssm_conv_rows(float* x, const float* __restrict__ kernel, float* states, int64_t state_stride,
                              ChunkRows rows, int64_t n, int64_t channels, int taps, RowStates kept) {
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= channels) return;
  const int window = taps - 1;
  const float* w = kernel + c * taps;
  float past[kMaxConvTaps - 1];  // the last taps - 1 inputs, oldest first
  float* state = nullptr;
  for (int64_t t = 0; t < n; ++t) {
    if (loads_state(rows, t)) {
      if (state) {
        for (int j = 0; j < window; ++j) state[j * channels + c] = past[j];
      }
      state = states + rows.slot[t] * state_stride;
      for (int j = 0; j < window; ++j) past[j] = rows.pos[t] == 0 ? 0.0f : state[j * channels + c];
    }
    float* v = x + t * channels + c;
    const float in = *v;
    float sum = 0.0f;
    for (int j = 0; j < window; ++j) sum += w[j] * past[j];
    sum += w[window] * in;
    for (int j = 0; j + 1 < window; ++j) past[j] = past[j + 1];
    past[window - 1] = in;
    *v = sum / (1.0f + expf(-sum));
    if (t < kept.rows) {
      for (int j = 0; j < window; ++j) kept.states[t * state_stride + j * channels + c] = past[j];
    }
  }
  if (state) {
    for (int j = 0; j < window; ++j) state[j * channels + c] = past[j];
  }
}

__device__ __forceinline__ float softplus(float x) { return x > 20.0f ? x : log1pf(expf(x)); }

__global__ void delta_net_prepare_rows(float* conv, float* alpha, float* beta, const float* __restrict__ dt,
                                       const float* __restrict__ a, DeltaNetHeads heads, float eps) {
  __shared__ float scratch[32];
  const int64_t t = blockIdx.x, d = heads.head_dim;
  float* row = conv + t * channels(heads);
  const float q_scale = 1.0f / sqrtf(static_cast<float>(d));
  for (int64_t head = 0; head < 2 * heads.n_k_heads; ++head) {  // the q heads, then the k heads
    float* x = row + head * d;
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < d; i += blockDim.x) sum += x[i] * x[i];
    const float s = (head < heads.n_k_heads ? q_scale : 1.0f) / fmaxf(sqrtf(block_sum(sum, scratch)), eps);
    for (int64_t i = threadIdx.x; i < d; i += blockDim.x) x[i] *= s;
  }
  for (int64_t h = threadIdx.x; h < heads.n_v_heads; h += blockDim.x) {
    const int64_t i = t * heads.n_v_heads + h;
    alpha[i] = softplus(alpha[i] + dt[h]) * a[h];
    beta[i] = 1.0f / (1.0f + expf(-beta[i]));
  }
}

// Warp (blockIdx.x * kWarpsPerBlock + warp) holds value row j of head blockIdx.y: lane l keys
// l, l + 32, ... in s.
__global__ void delta_net_rows(const float* __restrict__ conv, const float* __restrict__ g,
                               const float* __restrict__ beta, float* out, float* states, int64_t state_stride,
                               ChunkRows rows, DeltaNetHeads heads, int64_t n, RowStates kept) {
  const int lane = threadIdx.x % 32;
  const int64_t d = heads.head_dim, h = blockIdx.y;
  const int64_t j = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (j >= d) return;  // the whole warp
  const int64_t H = heads.n_v_heads, C = channels(heads);
  const int64_t kh = heads.grouped ? h / (H / heads.n_k_heads) : h % heads.n_k_heads;
  const int64_t q_col = kh * d, k_col = key_dim(heads) + kh * d, v_col = 2 * key_dim(heads) + h * d + j;
  const int64_t row_offset = (h * d + j) * d;  // of row j in the layer's matrices
  float s[kKeysPerLane];
  float* state = nullptr;
  for (int64_t t = 0; t < n; ++t) {
    if (loads_state(rows, t)) {
#pragma unroll
      for (int c = 0; c < kKeysPerLane; ++c) {
        const int64_t i = lane + 32 * c;
        if (state && i < d) state[i] = s[c];
      }
      state = states + rows.slot[t] * state_stride + row_offset;
#pragma unroll
      for (int c = 0; c < kKeysPerLane; ++c) {
        const int64_t i = lane + 32 * c;
        s[c] = i < d && rows.pos[t] != 0 ? state[i] : 0.0f;
      }
    }
    const float* q = conv + t * C + q_col;
    const float* k = conv + t * C + k_col;
    const float decay = expf(g[t * H + h]);
    float sk = 0.0f;
#pragma unroll
    for (int c = 0; c < kKeysPerLane; ++c) {
      const int64_t i = lane + 32 * c;
      if (i < d) {
        s[c] *= decay;
        sk += s[c] * k[i];
      }
    }
    const float u = beta[t * H + h] * (conv[t * C + v_col] - warp_sum(sk));
    float o = 0.0f;
#pragma unroll
    for (int c = 0; c < kKeysPerLane; ++c) {
      const int64_t i = lane + 32 * c;
      if (i < d) {
        s[c] += u * k[i];
        o += s[c] * q[i];
      }
    }
    o = warp_sum(o);
    if (lane == 0) out[t * value_dim(heads) + h * d + j] = o;
    if (t < kept.rows) {
#pragma unroll
      for (int c = 0; c < kKeysPerLane; ++c) {
        const int64_t i = lane + 32 * c;
        if (i < d) kept.states[t * state_stride + row_offset + i] = s[c];
      }
    }
  }
#pragma unroll
  for (int c = 0; c < kKeysPerLane; ++c) {
    const int64_t i = lane + 32 * c;
    if (state && i < d) state[i] = s[c];
  }
}

}  // namespace

cudaError_t launch_ssm_conv(float* x, const float* kernel, float* states, int64_t state_stride, ChunkRows rows,
                            int64_t n, int64_t channels, int64_t taps, RowStates kept, cudaStream_t stream) {
  if (taps < 2 || taps > kMaxConvTaps) return cudaErrorInvalidValue;
  if (n == 0 || channels == 0) return cudaSuccess;
  return launch_kernel(ssm_conv_rows, dim3(blocks_for(channels, kConvThreads)), dim3(kConvThreads), 0, stream, x,
                       kernel, states, state_stride, rows, n, channels, static_cast<int>(taps), kept);
}

cudaError_t launch_delta_net_prepare(float* conv, float* alpha, float* beta, const float* dt, const float* a,
                                     DeltaNetHeads heads, int64_t n, float eps, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return launch_kernel(delta_net_prepare_rows, dim3(static_cast<unsigned>(n)), dim3(kRowThreads), 0, stream, conv,
                       alpha, beta, dt, a, heads, eps);
}

cudaError_t launch_delta_net(const float* conv, const float* g, const float* beta, float* out, float* states,
                             int64_t state_stride, ChunkRows rows, DeltaNetHeads heads, int64_t n, RowStates kept,
                             cudaStream_t stream) {
  if (heads.head_dim < 1 || heads.head_dim > kMaxDeltaNetHeadDim || heads.n_k_heads < 1 ||
      heads.n_v_heads % heads.n_k_heads != 0) {
    return cudaErrorInvalidValue;
  }
  if (n == 0) return cudaSuccess;
  const dim3 grid(blocks_for(heads.head_dim, kWarpsPerBlock), static_cast<unsigned>(heads.n_v_heads));
  return launch_kernel(delta_net_rows, grid, dim3(32 * kWarpsPerBlock), 0, stream, conv, g, beta, out, states,
                       state_stride, rows, heads, n, kept);
}

}  // namespace inferscope::cuda_kernels
