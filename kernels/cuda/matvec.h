// Matrix products with GGUF weights on CUDA (matvec.cu, dequantize.cu): the weights stay in
// their file's block layout (GGUF-FORMATS.md 3.x), as uploaded.
// - Decode (few rows): launch_matvec, one fused kernel per weight type that decodes the blocks
//   in registers. The quantized types multiply int8 activations (launch_quantize_q8, blocks of
//   32 values with an F32 scale and the block's sum) with __dp4a where their codes are 8-bit
//   integers after unpacking; the float types (F32, F16, BF16, F16_2OF4) multiply F32.
// - Prefill (many rows): the backend dequantizes weight rows to F16/BF16 (launch_dequantize_rows)
//   and multiplies with cuBLAS (engine/backend/cuda/cuda_matmul).
// - Embeddings: launch_get_rows.
// All pointers are device memory; launches go on `stream` and return the launch's error.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/formats/ggml_type.h"

namespace inferscope::cuda_kernels {

// A weight matrix (or a stack of n_mats expert matrices) in device memory: row r of matrix m
// starts at data + m * matrix_bytes + r * row_bytes, cols values in `type`'s blocks.
struct DeviceWeight {
  kernels::GgmlType type = kernels::GgmlType::F32;
  const uint8_t* data = nullptr;
  int64_t rows = 0, cols = 0;
  int64_t row_bytes = 0;     // >= kernels::row_bytes(type, cols)
  int64_t matrix_bytes = 0;  // between stacked matrices
  int64_t n_mats = 1;
};
// Alignment: data, row_bytes and matrix_bytes are multiples of the type's block alignment (the
// largest power of two dividing its block's bytes, at most 16: weight_blocks.cuh kAlign), as in a
// tensor's own allocation; q8 and launch_quantize_q8's x are 16-byte aligned. Otherwise the
// launches return cudaErrorInvalidValue.

// Whether the kernels handle this type (every type the CPU backend multiplies: F32, F16, BF16,
// Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K..Q6_K, IQ4_NL, IQ4_XS, MXFP4, TQ1_0, TQ2_0, F16_2OF4).
bool matvec_supports(kernels::GgmlType type);

// The most rows launch_matvec takes in one launch (more: the caller splits, or uses cuBLAS).
constexpr int64_t kMaxMatvecRows = 8;

// Whether launch_matvec reads q8 (the int8 activations) for this type and row length.
bool matvec_takes_q8(kernels::GgmlType type, int64_t cols);
// Bytes of the int8 activations of rows x cols values (cols % 32 == 0). Per row: the int8 codes,
// then per 32 values {F32 scale, int32 sum of the codes}, padded to 16 bytes (q8_activations.cuh).
int64_t q8_activation_bytes(int64_t rows, int64_t cols);
// Quantizes x ([rows][cols] F32, cols % 32 == 0) into q8 (q8_activation_bytes bytes).
cudaError_t launch_quantize_q8(const float* x, int64_t rows, int64_t cols, void* q8, cudaStream_t stream);

// y[t * y_stride + r] = sum_c W[r][c] x[t][c] for t < n <= kMaxMatvecRows, r < w.rows (matrix 0).
// x: [n][w.cols] F32; q8: x quantized (launch_quantize_q8) when matvec_takes_q8, else ignored.
// Summation in F32 per 32-value block, in an order that differs from the CPU kernels'.
cudaError_t launch_matvec(const DeviceWeight& w, const float* x, const void* q8, int64_t n, float* y, int64_t y_stride,
                          cudaStream_t stream);

// Experts: y[(t * k + j) * w.rows + r] = W[ids[t * k + j]][r] . x[x_per_pair ? t * k + j : t] for
// t < n_tokens, j < k, r < w.rows; an id outside [0, w.n_mats) gives zeros. Any number of
// tokens. x, q8 as launch_matvec (rows: n_tokens, or n_tokens * k when x_per_pair).
cudaError_t launch_matvec_experts(const DeviceWeight& w, const float* x, const void* q8, bool x_per_pair,
                                  const int32_t* ids, int64_t n_tokens, int64_t k, float* y, cudaStream_t stream);

enum class TileType : int { F16 = 0, BF16 = 1 };

// dst[i][c] = W[mat][row0 + i][c] for i < rows, c < w.cols, decoded exactly as
// kernels::dequantize_row and rounded to `out` (to nearest even). dst: [rows][w.cols].
cudaError_t launch_dequantize_rows(const DeviceWeight& w, int64_t mat, int64_t row0, int64_t rows, TileType out,
                                   void* dst, cudaStream_t stream);

// dst[i] = x[i] rounded to `out` for i < count (the activations of a cuBLAS product).
cudaError_t launch_convert(const float* x, int64_t count, TileType out, void* dst, cudaStream_t stream);

// out[i][:] = dequantize(table row ids[i]) * scale for i < n, bit-exact with
// kernels::dequantize_row followed by one F32 multiply (scale 1 copies); an id outside
// [0, table.rows) gives a row of zeros. out: [n][table.cols] F32.
cudaError_t launch_get_rows(const DeviceWeight& table, const int32_t* ids, int64_t n, float scale, float* out,
                            cudaStream_t stream);

}  // namespace inferscope::cuda_kernels
