// Encoders from float32 for the block types beyond Q8_0/Q4_0 (layouts: GGUF-FORMATS.md 3.3-3.18,
// the inverse of dequantize_blocks.cpp). Q4_1, Q5_0 and Q5_1 follow the format's min/max rules
// and are byte-identical to llama-quantize, and so is MXFP4 (its nearest-level rule). The K-quants, IQ4_NL, IQ4_XS and the ternary types search
// their scales (and mins) for the least squared error of the decoded values; they are not
// byte-identical to llama.cpp but at least as accurate.
// Each takes a row of `n` elements; precondition: n is a multiple of the type's block size
// (32 for Q4_1/Q5_0/Q5_1/IQ4_NL, 256 for the K-quants, IQ4_XS and TQ types). dst has row_bytes(type, n).
// `importance` (n values >= 0, or null) weighs each column's squared error in the scale and min
// searches of the K-quants, IQ4_NL and IQ4_XS (an imatrix's means: quantize --imatrix); the other
// encoders' rules take none and ignore it.
#pragma once

#include <cstdint>

namespace inferscope::kernels::detail {

void quantize_q4_1(const float* src, uint8_t* dst, int64_t n, const float* importance);
void quantize_q5_0(const float* src, uint8_t* dst, int64_t n, const float* importance);
void quantize_q5_1(const float* src, uint8_t* dst, int64_t n, const float* importance);
void quantize_q2_k(const float* src, uint8_t* dst, int64_t n, const float* importance);
void quantize_q3_k(const float* src, uint8_t* dst, int64_t n, const float* importance);
void quantize_q4_k(const float* src, uint8_t* dst, int64_t n, const float* importance);
void quantize_q5_k(const float* src, uint8_t* dst, int64_t n, const float* importance);
void quantize_q6_k(const float* src, uint8_t* dst, int64_t n, const float* importance);
void quantize_iq4_nl(const float* src, uint8_t* dst, int64_t n, const float* importance);
void quantize_iq4_xs(const float* src, uint8_t* dst, int64_t n, const float* importance);
void quantize_mxfp4(const float* src, uint8_t* dst, int64_t n, const float* importance);
void quantize_tq1_0(const float* src, uint8_t* dst, int64_t n, const float* importance);
void quantize_tq2_0(const float* src, uint8_t* dst, int64_t n, const float* importance);

}  // namespace inferscope::kernels::detail
