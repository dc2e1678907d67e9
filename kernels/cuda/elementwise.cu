#include "kernels/cuda/elementwise.h"

#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/launch.h"

namespace inferscope::cuda_kernels {
namespace {

constexpr int kRowThreads = 256;  // threads per row of the per-row kernels
constexpr int kThreads = 256;     // threads per block of the element-wise kernels

__device__ __forceinline__ float gelu_tanh(float x) {
  const float kSqrt2OverPi = 0.7978845608028654f;
  return 0.5f * x * (1.0f + tanhf(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
}

__device__ __forceinline__ float silu(float x) { return x / (1.0f + expf(-x)); }

// gpt-oss's clamped SwiGLU of a gate and up value (kernels::swiglu_oai; alpha 1.702, limit 7).
__device__ __forceinline__ float swiglu_oai(float g, float u) {
  const float gc = fminf(g, 7.0f), uc = fminf(fmaxf(u, -7.0f), 7.0f);
  return gc / (1.0f + expf(-1.702f * gc)) * (uc + 1.0f);
}

__global__ void rms_norm_rows(const float* x, const float* __restrict__ w, float* y, int64_t width, float eps) {
  __shared__ float scratch[32];
  const float* row = x + blockIdx.x * width;
  float* out = y + blockIdx.x * width;
  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) sum += row[i] * row[i];
  sum = block_sum(sum, scratch);
  const float scale = 1.0f / sqrtf(sum / static_cast<float>(width) + eps);
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) out[i] = row[i] * scale * w[i];
}

__global__ void layer_norm_rows(const float* x, const float* __restrict__ w, const float* __restrict__ b, float* y,
                                int64_t width, float eps) {
  __shared__ float scratch[32];
  const float* row = x + blockIdx.x * width;
  float* out = y + blockIdx.x * width;
  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) sum += row[i];
  const float mean = block_sum(sum, scratch) / static_cast<float>(width);
  float var = 0.0f;
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) var += (row[i] - mean) * (row[i] - mean);
  const float scale = 1.0f / sqrtf(block_sum(var, scratch) / static_cast<float>(width) + eps);
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) out[i] = (row[i] - mean) * scale * w[i] + b[i];
}

__global__ void glu_rows(int act, float* gate, const float* __restrict__ up, int64_t width, int64_t stride) {
  float* g = gate + blockIdx.y * stride;
  const float* u = up + blockIdx.y * stride;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= width) return;
  if (act == static_cast<int>(Activation::SwigluOai)) {
    g[i] = swiglu_oai(g[i], u[i]);
    return;
  }
  if (act == static_cast<int>(Activation::Sigmoid)) {
    g[i] = u[i] / (1.0f + expf(-g[i]));
    return;
  }
  const float a = act == static_cast<int>(Activation::Silu) ? silu(g[i]) : gelu_tanh(g[i]);
  g[i] = a * u[i];
}

__global__ void gelu_values(float* x, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] = gelu_tanh(x[i]);
}

__global__ void add_values(float* y, const float* __restrict__ x, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] += x[i];
}

// Row blockIdx.y of x takes bias row bias_rows[blockIdx.y] (row 0 when bias_rows is null).
__global__ void add_bias_rows(float* x, const float* __restrict__ bias, const int32_t* __restrict__ bias_rows,
                              int64_t width) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t b = bias_rows ? bias_rows[blockIdx.y] : 0;
  if (i < width) x[blockIdx.y * width + i] += bias[b * width + i];
}

__global__ void scale_values(float* x, int64_t n, float s) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}

// Row blockIdx.y: dst's `width` values times the first `width` of src's row (src_stride apart).
__global__ void mul_columns_rows(float* dst, const float* __restrict__ src, int64_t width, int64_t src_stride) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < width) dst[blockIdx.y * width + i] *= src[blockIdx.y * src_stride + i];
}

// Row blockIdx.y: src's `width` values into dst's row (dst_stride apart).
__global__ void copy_columns_rows(float* dst, int64_t dst_stride, const float* __restrict__ src, int64_t width) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < width) dst[blockIdx.y * dst_stride + i] = src[blockIdx.y * width + i];
}

__global__ void softcap_values(float* x, int64_t n, float cap) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] = cap * tanhf(x[i] / cap);
}

}  // namespace

cudaError_t launch_rms_norm(const float* x, const float* w, float* y, int64_t rows, int64_t width, float eps,
                            cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  return launch_kernel(rms_norm_rows, dim3(static_cast<unsigned>(rows)), dim3(kRowThreads), 0, stream, x, w, y,
                       width, eps);
}

cudaError_t launch_layer_norm(const float* x, const float* w, const float* b, float* y, int64_t rows, int64_t width,
                              float eps, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  return launch_kernel(layer_norm_rows, dim3(static_cast<unsigned>(rows)), dim3(kRowThreads), 0, stream, x, w, b,
                       y, width, eps);
}

cudaError_t launch_glu(Activation act, float* gate, const float* up, int64_t rows, int64_t width, int64_t stride,
                       cudaStream_t stream) {
  if (rows == 0 || width == 0) return cudaSuccess;
  return launch_kernel(glu_rows, dim3(blocks_for(width, kThreads), static_cast<unsigned>(rows)), dim3(kThreads), 0,
                       stream, static_cast<int>(act), gate, up, width, stride);
}

cudaError_t launch_gelu(float* x, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return launch_kernel(gelu_values, dim3(blocks_for(n, kThreads)), dim3(kThreads), 0, stream, x, n);
}

cudaError_t launch_add(float* y, const float* x, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return launch_kernel(add_values, dim3(blocks_for(n, kThreads)), dim3(kThreads), 0, stream, y, x, n);
}

cudaError_t launch_add_bias(float* x, const float* bias, int64_t rows, int64_t width, cudaStream_t stream) {
  if (rows == 0 || width == 0) return cudaSuccess;
  return launch_kernel(add_bias_rows, dim3(blocks_for(width, kThreads), static_cast<unsigned>(rows)), dim3(kThreads),
                       0, stream, x, bias, static_cast<const int32_t*>(nullptr), width);
}

cudaError_t launch_add_expert_bias(float* x, const float* bias, const int32_t* ids, int64_t rows, int64_t width,
                                   cudaStream_t stream) {
  if (rows == 0 || width == 0) return cudaSuccess;
  return launch_kernel(add_bias_rows, dim3(blocks_for(width, kThreads), static_cast<unsigned>(rows)), dim3(kThreads),
                       0, stream, x, bias, ids, width);
}

cudaError_t launch_scale(float* x, int64_t n, float s, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return launch_kernel(scale_values, dim3(blocks_for(n, kThreads)), dim3(kThreads), 0, stream, x, n, s);
}

cudaError_t launch_mul_columns(float* dst, const float* src, int64_t rows, int64_t width, int64_t src_stride,
                               cudaStream_t stream) {
  if (rows == 0 || width == 0) return cudaSuccess;
  return launch_kernel(mul_columns_rows, dim3(blocks_for(width, kThreads), static_cast<unsigned>(rows)),
                       dim3(kThreads), 0, stream, dst, src, width, src_stride);
}

cudaError_t launch_copy_columns(float* dst, int64_t dst_stride, const float* src, int64_t rows, int64_t width,
                                cudaStream_t stream) {
  if (rows == 0 || width == 0) return cudaSuccess;
  return launch_kernel(copy_columns_rows, dim3(blocks_for(width, kThreads), static_cast<unsigned>(rows)),
                       dim3(kThreads), 0, stream, dst, dst_stride, src, width);
}

cudaError_t launch_softcap(float* x, int64_t n, float cap, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return launch_kernel(softcap_values, dim3(blocks_for(n, kThreads)), dim3(kThreads), 0, stream, x, n, cap);
}

}  // namespace inferscope::cuda_kernels
