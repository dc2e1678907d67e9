// Encoders from float32 for every weight type we write (GGUF-FORMATS.md 3.1-3.18, 4.1, 4.2).
#pragma once

#include <cstdint>

#include "kernels/formats/ggml_type.h"

namespace inferscope::kernels {

// Encodes n floats into row_bytes(type, n) bytes at dst.
// Supported: F32, F16, BF16 (round to nearest even, ggml NaN rules), Q8_0 (4.1), Q4_0 (4.2),
// and through quantize_blocks.h Q4_1, Q5_0, Q5_1, MXFP4 (byte-identical to llama-quantize), Q2_K..Q6_K,
// IQ4_NL, IQ4_XS, TQ1_0, TQ2_0 (least-squares scale search, not byte-identical).
// Returns false (and writes nothing) for other types or when n % block_size != 0.
// `importance` (n values >= 0, or null): each column's weight in the scale searches of the types
// that take one (takes_importance); ignored by the others.
bool quantize_row(GgmlType type, const float* src, void* dst, int64_t n, const float* importance = nullptr);

// The types whose encoders weigh columns by an importance matrix: Q2_K..Q6_K, IQ4_NL, IQ4_XS.
bool takes_importance(GgmlType type);

// Q8_0 rule for one block of 32 values with the scale kept in float32 (the activation format
// of the matmul kernels). Returns d; q receives round-half-away(x / d).
float quantize_block_q8(const float* x, int8_t* q);

}  // namespace inferscope::kernels
