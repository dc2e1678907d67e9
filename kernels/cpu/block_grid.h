// The integer grid an encoded block puts each of its elements on, and how to set one element's
// integer: what GPTQ needs to pick the rounding of each weight itself while the block's scales
// stay those of the type's own encoder (GGUF-FORMATS.md 3.x, 4.1, 4.2).
//
// Element e of a block decodes to step * q + offset for an integer q in [q_min, q_max], or, for
// the non-linear types, to step * levels[q]; the float evaluation is the decoder's, so value()
// equals dequantize_row() bit for bit. Supported types: Q8_0, Q4_0, Q4_1, IQ4_NL (32-element
// blocks) and Q3_K, Q4_K, Q5_K, IQ4_XS (256).
#pragma once

#include <cstdint>

#include "kernels/formats/ggml_type.h"

namespace inferscope::kernels {

struct ElementGrid {
  float step = 0;
  float offset = 0;
  int q_min = 0, q_max = 0;
  const int8_t* levels = nullptr;  // ascending, indexed by q (IQ4_NL / IQ4_XS); null: linear

  // The grid point nearest x (q_min..q_max; the lowest q when step is 0).
  int nearest(float x) const;
  float value(int q) const {
    return levels ? step * static_cast<float>(levels[q]) : static_cast<float>(q) * step + offset;
  }
};

bool has_block_grid(GgmlType type);
// Element e (0 .. block_size-1) of the encoded block at `block`. Precondition: has_block_grid.
ElementGrid element_grid(GgmlType type, const uint8_t* block, int e);
// Stores integer q (within the element's grid) as element e of the block.
void set_element_quant(GgmlType type, uint8_t* block, int e, int q);

}  // namespace inferscope::kernels
