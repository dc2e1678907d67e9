// Scalar reference decoders of the i-quant weight types (GGUF-FORMATS.md 3.16, 3.19), super-blocks
// of 256 values over the grids of kernels/formats/iq_grids.h. Each takes a row of `n` elements;
// precondition: n % 256 == 0. Bit-exact with llama.cpp's dequantize_row_iq* (binary32, one
// rounding per operation in the order written, no FMA contraction). Layouts (little-endian, d an
// F16 super-block scale), per group of 32 values ib:
//   IQ2_XXS (66 B): d, qs u16[32]. Group ib's two u32 words a, b (qs 4ib..4ib+3): value 8l+j =
//     d * (0.5 + b >> 28) * 0.25 * iq2xxs[byte l of a][j] * sign j of iq_signs(b >> 7l).
//   IQ2_XS (74 B): d, qs u16[32], scales u8[8]. Entry q = qs[4ib + l]: iq2xs[q & 511] with
//     iq_signs(q >> 9), scale d * (0.5 + nibble l/2 of scales[ib]) * 0.25.
//   IQ2_S (82 B): d, qs u8[64] (grid low bits, then 32 sign bytes), qh u8[8], scales u8[8]: entry
//     l of group ib is iq2s[qs[4ib + l] | (qh[ib] >> 2l & 3) << 8], signs byte 32 + 4ib + l.
//   IQ3_XXS (98 B): d, qs u8[64] (grid indices), then u32[8] per group: scale d * (0.5 + w >> 28)
//     * 0.5, pair l's signs iq_signs(w >> 7l); values 8l..8l+3 from iq3xxs[qs[8ib + 2l]], 8l+4..
//     from iq3xxs[qs[8ib + 2l + 1]].
//   IQ3_S (110 B): d, qs u8[64], qh u8[8], signs u8[32], scales u8[4]: groups in pairs with scales
//     d * (1 + 2 * nibble); index qs | 9th bit from qh, explicit sign bytes.
//   IQ1_S (50 B): d, qs u8[32], qh u16[8]: value = d * (2 * (qh >> 12 & 7) + 1) * (iq1s[qs |
//     (qh >> 3l & 7) << 8][j] + delta), delta -0.125 when qh's bit 15 is set, else 0.125.
//   IQ1_M (56 B): qs u8[32], qh u8[16], scales u16[4] (3-bit scales per 16 values; d the F16 of
//     the four words' top nibbles); each group of 8 has its own delta sign bit in qh.
//   IQ4_XS (136 B): d, scales_h u16, scales_l u8[4], qs u8[128]: group ib's scale d * (ls - 32),
//     ls = nibble ib of scales_l | 2 bits ib of scales_h << 4, values the IQ4_NL levels.
#pragma once

#include <cstdint>

namespace inferscope::kernels::detail {

void dequantize_iq2_xxs(const uint8_t* src, float* dst, int64_t n);
void dequantize_iq2_xs(const uint8_t* src, float* dst, int64_t n);
void dequantize_iq2_s(const uint8_t* src, float* dst, int64_t n);
void dequantize_iq3_xxs(const uint8_t* src, float* dst, int64_t n);
void dequantize_iq3_s(const uint8_t* src, float* dst, int64_t n);
void dequantize_iq1_s(const uint8_t* src, float* dst, int64_t n);
void dequantize_iq1_m(const uint8_t* src, float* dst, int64_t n);
void dequantize_iq4_xs(const uint8_t* src, float* dst, int64_t n);

}  // namespace inferscope::kernels::detail
