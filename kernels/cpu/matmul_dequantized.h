// Internal to the matmul kernels: products of the weight types that have a decoder but no int8
// kernel yet (NVFP4, Q1_0, Q2_0; the i-quants go through matmul_kquant.h): panels of weight rows
// decoded to F32 in thread scratch (dequantize.h, bit-exact), each multiplied by the F32 kernels with F32 activations.
// The decoding is scalar and runs once per product, so decode steps pay it for every weight.
#pragma once

#include <cstdint>

#include "kernels/cpu/matmul.h"
#include "kernels/formats/ggml_type.h"

namespace inferscope::kernels::detail {

bool is_dequantized_weight(GgmlType w);

// matmul_rows for an is_dequantized_weight type over F32 packed activations.
void matmul_dequantized(GgmlType w, const uint8_t* weights, int64_t k, const void* packed, int64_t n_tokens, float* y,
                        int64_t y_stride, int64_t row_begin, int64_t row_end, TokenBatching batching);

}  // namespace inferscope::kernels::detail
