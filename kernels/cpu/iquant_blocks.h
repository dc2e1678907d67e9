// The i-quant super-blocks (dequantize_iquants.h gives the layouts) read into integers: every
// value is
//   x[e] = (unit * scale[e / 16]) * v[e]
// with v a signed small integer (a grid coordinate with its sign; for IQ1_S / IQ1_M the
// coordinate plus its delta, times 8; for IQ4_XS the IQ4_NL level), scale a small integer per 16
// values (groups of 32 repeat theirs), and unit the F16 super-block scale times a power of two.
// Computed in binary32 in that order, x is bit for bit llama.cpp's dequantized value: each of its
// formulas is (d times an integer) rounded once, then times a power of two and the coordinate,
// and scaling by a power of two commutes with rounding. The decoders (dequantize_iquants.cpp) and
// the Q8_K products' unpacking (matmul_kquant.cpp) both start here.
#pragma once

#include <cstdint>

#include "kernels/formats/fp16.h"
#include "kernels/formats/ggml_type.h"

namespace inferscope::kernels::detail {

// The unit of super-block `blk` of type T: its F16 scale (IQ1_M's assembled from the top nibbles
// of its four scale words) times the power of two of T's scale formula. Inline for the SIMD
// kernels, which read it once per super-block.
template <GgmlType T>
static inline float iq_unit(const uint8_t* blk) {
  if constexpr (T == GgmlType::IQ1_M) {
    const uint8_t* sc = blk + 48;
    const auto bits = static_cast<uint16_t>((load_u16(sc) >> 12) | ((load_u16(sc + 2) >> 8) & 0x00F0) |
                                            ((load_u16(sc + 4) >> 4) & 0x0F00) | (load_u16(sc + 6) & 0xF000));
    return fp16_to_fp32(bits) * 0.125f;
  } else if constexpr (T == GgmlType::IQ3_XXS) {
    return fp16_to_fp32(load_u16(blk)) * 0.25f;  // d * (0.5 + s) * 0.5 = (d / 4) * (2s + 1)
  } else if constexpr (T == GgmlType::IQ3_S || T == GgmlType::IQ4_XS) {
    return fp16_to_fp32(load_u16(blk));  // d * (1 + 2s), d * (ls - 32)
  } else {
    return fp16_to_fp32(load_u16(blk)) * 0.125f;  // IQ2_*: d * (0.5 + s) * 0.25; IQ1_S: d * (2s + 1) / 8
  }
}

struct IqIntBlock {
  float unit = 0.0f;
  int scale[16] = {};
  int8_t v[256] = {};
};

// The types read here: IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ4_XS.
bool is_iq_block_type(GgmlType type);

// The largest |v| of a type (the offset that makes v + offset unsigned).
int iq_max_level(GgmlType type);

// Super-block `blk` (type_info(type).type_size bytes) of an is_iq_block_type type.
void read_iq_block(GgmlType type, const uint8_t* blk, IqIntBlock* out);

}  // namespace inferscope::kernels::detail
