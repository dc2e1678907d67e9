// F16_2OF4: 2:4 semi-structured sparse F16 weights, our own GGUF type (id 200; other readers do
// not know it). Of every 4 consecutive weights of a row at most 2 are non-zero; a block of 32
// weights stores only the 16 kept values and their positions (36 bytes instead of F16's 64):
//   uint16_t values[16]  F16, group g's two kept values at 2g and 2g + 1
//   uint8_t  pos[4]      group g's positions (0..3) in nibble g % 2 of byte g / 2: bits 0-1 the
//                        first kept value's, bits 2-3 the second's
// Decoding reads only those bytes: the matmul expands them in registers (sparse24_avx2.cpp) or picks the
// activations they meet (sparse24_avx512.cpp).
#pragma once

#include <cstdint>

namespace inferscope::kernels {

inline constexpr int64_t kSparse24BlockBytes = 36;

// Keeps the 2 largest |x| of every 4 (ties: the lower position), n % 32 == 0.
void quantize_row_sparse24(const float* x, uint8_t* dst, int64_t n);
void dequantize_row_sparse24(const uint8_t* src, float* dst, int64_t n);

// y[t * y_stride + r] = W[r] . x[t] for rows [r0, r1): W rows of row_bytes (k / 32 blocks),
// x float rows with stride x_stride. Scalar, AVX2 (weights expanded in registers) and AVX-512
// (activations permuted to the kept values) variants.
void matmul_sparse24_reference(const uint8_t* w, int64_t k, int64_t row_bytes, const float* x, int64_t x_stride,
                               int64_t n_tokens, float* y, int64_t y_stride, int64_t r0, int64_t r1);

namespace detail {
void matmul_sparse24_avx2(const uint8_t* w, int64_t k, int64_t row_bytes, const float* x, int64_t x_stride,
                          int64_t n_tokens, float* y, int64_t y_stride, int64_t r0, int64_t r1);
void matmul_sparse24_avx512(const uint8_t* w, int64_t k, int64_t row_bytes, const float* x, int64_t x_stride,
                            int64_t n_tokens, float* y, int64_t y_stride, int64_t r0, int64_t r1);
}  // namespace detail

}  // namespace inferscope::kernels
