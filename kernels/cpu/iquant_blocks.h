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

#include "kernels/formats/ggml_type.h"

namespace inferscope::kernels::detail {

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
