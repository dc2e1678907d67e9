// Scalar reference decoders for the block-quantized GGUF weight types (GGUF-FORMATS.md 3.3-3.18).
// Each takes a row of `n` elements; precondition: n is a multiple of the type's block size
// (32 for Q4_1/Q5_0/Q5_1/IQ4_NL, 256 for the K-quants and TQ types). Results are bit-exact with
// llama.cpp's dequantize_row_* (binary32, one rounding per operation, no FMA contraction).
#pragma once

#include <cstdint>

namespace inferscope::kernels::detail {

void dequantize_q4_1(const uint8_t* src, float* dst, int64_t n);
void dequantize_q5_0(const uint8_t* src, float* dst, int64_t n);
void dequantize_q5_1(const uint8_t* src, float* dst, int64_t n);
void dequantize_q2_k(const uint8_t* src, float* dst, int64_t n);
void dequantize_q3_k(const uint8_t* src, float* dst, int64_t n);
void dequantize_q4_k(const uint8_t* src, float* dst, int64_t n);
void dequantize_q5_k(const uint8_t* src, float* dst, int64_t n);
void dequantize_q6_k(const uint8_t* src, float* dst, int64_t n);
void dequantize_iq4_nl(const uint8_t* src, float* dst, int64_t n);
// MXFP4 (type 39): blocks of 32 values {u8 e (E8M0); u8 qs[16]}: value j < 16 is
// kMxfp4Levels[qs[j] & 15] * 2^(e - 128), value j + 16 the same of qs[j] >> 4 (kernels/formats/e8m0.h).
void dequantize_mxfp4(const uint8_t* src, float* dst, int64_t n);
// NVFP4 (type 40): blocks of 64 values {u8 d[4] (UE4M3, one per 16 values); u8 qs[32]}: in
// sub-block s, value j < 8 is kMxfp4Levels[qs[8s + j] & 15] * ue4m3_to_fp32_half(d[s]), value
// j + 8 the same of qs[8s + j] >> 4 (kernels/formats/ue4m3.h).
void dequantize_nvfp4(const uint8_t* src, float* dst, int64_t n);
// Q1_0 (type 41): blocks of 128 values {f16 d; u8 qs[16]}: bit j (bit j % 8 of qs[j / 8]) set
// gives d, clear -d.
void dequantize_q1_0(const uint8_t* src, float* dst, int64_t n);
// Q2_0 (type 42): blocks of 64 values {f16 d; u8 qs[16]}: value j = (q - 1) * d, q the 2 bits
// at 2 * (j % 4) of qs[j / 4].
void dequantize_q2_0(const uint8_t* src, float* dst, int64_t n);
void dequantize_tq1_0(const uint8_t* src, float* dst, int64_t n);
void dequantize_tq2_0(const uint8_t* src, float* dst, int64_t n);

}  // namespace inferscope::kernels::detail
