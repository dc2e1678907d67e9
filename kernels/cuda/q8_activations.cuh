// The int8 activations of the quantized matvec (launch_quantize_q8 writes them, launch_matvec
// reads them; matvec.h). A row of `cols` F32 values (cols % 32 == 0) takes q8_row_bytes(cols)
// bytes, 16-byte aligned when the buffer is:
//   bytes [0, cols)               the int8 codes, value c's at byte c
//   bytes [cols, cols + cols / 4) per 32-value block b, 8 bytes {F32 d; int32 sum}: the scale and
//                                 the sum of the block's 32 codes
//   then zero to 15 bytes of padding.
// The codes and scales are the CPU backend's (kernels::pack_activations for the 32-block types):
// the Q8_0 rule of GGUF-FORMATS.md 4.1, d = amax / 127, code = roundf(x / d), with d then
// rounded to F16 (and held as F32); value c is approximately d * code.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace inferscope::cuda_kernels {

__host__ __device__ inline int64_t q8_row_bytes(int64_t cols) { return (cols + cols / 4 + 15) / 16 * 16; }

// One token's quantized activations.
struct Q8Row {
  const int8_t* codes;  // [cols], 16-byte aligned
  const int2* meta;     // [cols / 32] {F32 d bits, sum}

  __device__ static Q8Row at(const uint8_t* q8, int64_t cols, int64_t t) {
    const uint8_t* row = q8 + t * q8_row_bytes(cols);
    return {reinterpret_cast<const int8_t*>(row), reinterpret_cast<const int2*>(row + cols)};
  }
  // Codes 4i..4i+3 as one word; two (i even) or four (i % 4 == 0) consecutive words.
  __device__ int quad(int64_t i) const { return reinterpret_cast<const int*>(codes)[i]; }
  __device__ int2 quads2(int64_t i) const { return reinterpret_cast<const int2*>(codes)[i / 2]; }
  __device__ int4 quads4(int64_t i) const { return reinterpret_cast<const int4*>(codes)[i / 4]; }
  __device__ float scale(int64_t block) const { return __int_as_float(meta[block].x); }
};

}  // namespace inferscope::cuda_kernels
