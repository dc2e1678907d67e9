// The values shared by IQ1_S and IQ1_M: a grid point's coordinates c (-1, 0, 1) plus the group's
// delta (+-1/8), times 8: v = 8c +- 1.
#ifndef TYPES_IQ1_VALUES_GLSL
#define TYPES_IQ1_VALUES_GLSL

// Point `index` of the grid (stored as c + 1; include after iq_grid_values.glsl) as the bytes 8c - 1 (negative delta) or 8c + 1:
// 8(c + 1) + 128 - bias with bias 9 or 7 stays in 0..255 (no carries), then offset binary to
// two's complement.
uvec2 iq1_values(uint index, bool negative_delta) {
  uint bias = (negative_delta ? 9u : 7u) * 0x01010101u;
  uvec2 p = grid_point8(IQ_GRID_IQ1S, index);
  return ((p * 8u + 0x80808080u - bias) ^ 0x80808080u);
}

#endif
