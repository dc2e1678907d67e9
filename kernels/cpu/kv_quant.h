// Encoding and reference decoding of KV-cache rows, in the formats of kernels/formats/kv_type.h
// (docs/KV-CACHE.md): the KV store op of the CPU backend, and the reference the attention
// kernels and the other backends are tested against.
#pragma once

#include <cstdint>

#include "kernels/formats/kv_type.h"

namespace inferscope::kernels {

// Encodes n floats as a row of `type` at row (kv_row_bytes(type, n) bytes): the KV store op.
// Precondition: n % kv_row_granule(type) == 0.
void kv_quantize_row(KvType type, const float* x, uint8_t* row, int64_t n);

// Decodes values [first, first + n) of a row of `type` into y (the reference decoder; the
// attention kernels decode blocks in registers instead). Preconditions: F16: any range;
// quantized: any range within the row's blocks.
void kv_dequantize(KvType type, const uint8_t* row, int64_t first, int64_t n, float* y);

}  // namespace inferscope::kernels
