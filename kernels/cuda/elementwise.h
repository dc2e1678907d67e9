// Element-wise and per-row kernels of the forward pass on CUDA (elementwise.cu): each the CUDA
// form of the CPU kernel named beside it (kernels/cpu/ops.h), over F32 rows in device memory,
// launched on `stream`. They return the launch's error.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace inferscope::cuda_kernels {

// y[r][i] = x[r][i] / sqrt(mean(x[r]^2) + eps) * w[i] for r < rows, i < width (rms_norm).
// x and y may alias. One block per row.
cudaError_t launch_rms_norm(const float* x, const float* w, float* y, int64_t rows, int64_t width, float eps,
                            cudaStream_t stream);

// y[r] = (x[r] - mean) / sqrt(var + eps) * w + b (layer_norm, biased variance). x and y may alias.
cudaError_t launch_layer_norm(const float* x, const float* w, const float* b, float* y, int64_t rows, int64_t width,
                              float eps, cudaStream_t stream);

enum class Activation : int { Silu = 0, GeluTanh = 1, SwigluOai = 2, Sigmoid = 3 };

// gate[r][i] = act(gate[r][i]) * up[r][i] for r < rows, i < width (swiglu, geglu, sigmoid_gate:
// gated attention's output gate); SwigluOai: gpt-oss's clamped form of gate and up together
// (swiglu_oai). Rows of `stride` floats.
cudaError_t launch_glu(Activation act, float* gate, const float* up, int64_t rows, int64_t width, int64_t stride,
                       cudaStream_t stream);

// x[i] = gelu(x[i]) for i < n (gelu, tanh form).
cudaError_t launch_gelu(float* x, int64_t n, cudaStream_t stream);

// y[i] += x[i] for i < n (add).
cudaError_t launch_add(float* y, const float* x, int64_t n, cudaStream_t stream);

// x[r][i] += bias[i] for r < rows, i < width.
cudaError_t launch_add_bias(float* x, const float* bias, int64_t rows, int64_t width, cudaStream_t stream);

// x[r][i] += bias[ids[r]][i] for r < rows, i < width: each route's row takes its expert's bias
// row (gpt-oss; CpuOps::add_expert_bias). bias: [n_expert][width]; ids: [rows], each < n_expert.
cudaError_t launch_add_expert_bias(float* x, const float* bias, const int32_t* ids, int64_t rows, int64_t width,
                                   cudaStream_t stream);

// x[i] *= s for i < n (CpuOps::scale). Exact: one F32 multiply.
cudaError_t launch_scale(float* x, int64_t n, float s, cudaStream_t stream);

// dst[r][i] *= src[r * src_stride + i] for r < rows, i < width (CpuOps::mul_columns: src points
// at the first column taken of rows src_stride floats apart; gemma4's gate times its layer's
// slice of the per-layer inputs). dst: [rows][width]. Exact. Preconditions: src_stride >= width,
// rows <= 65535.
cudaError_t launch_mul_columns(float* dst, const float* src, int64_t rows, int64_t width, int64_t src_stride,
                               cudaStream_t stream);

// dst[r * dst_stride + i] = src[r * width + i] for r < rows, i < width (CpuOps::copy_columns:
// dst points at the first column written; the MTP block's two halves of its input). Exact.
// Preconditions: dst_stride >= width, rows <= 65535, dst and src apart.
cudaError_t launch_copy_columns(float* dst, int64_t dst_stride, const float* src, int64_t rows, int64_t width,
                                cudaStream_t stream);

// x[i] = cap * tanh(x[i] / cap) for i < n (softcap). cap > 0.
cudaError_t launch_softcap(float* x, int64_t n, float cap, cudaStream_t stream);

}  // namespace inferscope::cuda_kernels
