// Scalar reference decoding of weight rows to float32, bit-exact with llama.cpp's reference
// dequantizers (GGUF-FORMATS.md 3.0-3.6).
#pragma once

#include <cstdint>

#include "kernels/formats/ggml_type.h"

namespace inferscope::kernels {

// Decodes n elements starting at a block boundary of `src` into dst.
// Supported (bit-exact with llama.cpp's decoders): F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1,
// Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, TQ1_0, TQ2_0, MXFP4, the i-quants (IQ1_S, IQ1_M, IQ2_XXS,
// IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ4_XS), NVFP4, Q1_0, Q2_0. Returns false (and writes nothing) for any
// other type or when n is not a multiple of the type's block size.
bool dequantize_row(GgmlType type, const void* src, float* dst, int64_t n);

}  // namespace inferscope::kernels
