// The decoding shared by the grid i-quants (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS,
// IQ3_S; GGUF-FORMATS.md 3.19): one chunk is one 32-value group, whose load_chunk (in the type's
// file) has already looked its grid points up and applied their signs, leaving the group as 32
// signed bytes v and the scales of its two 16-value halves d[h] = unit * scale, so that
// x = d[h] * v: kernels/cpu/iquant_blocks.h's form, bit for bit the CPU's decoding. The grids are
// a storage buffer at GRID_BINDING (kernels/formats/iq_grid_layout.h), not constant arrays: lavapipe takes
// seconds to minutes to compile a shader indexing a constant array of thousands of entries.
#ifndef TYPES_IQ_GRID_VALUES_GLSL
#define TYPES_IQ_GRID_VALUES_GLSL
#include "kernels/formats/iq_grid_layout.h"
#define QK 256
#define CHUNK 32

layout(std430, set = 0, binding = GRID_BINDING) readonly buffer IqGridWords { uint grid32[]; };

// Point i of the 8-coordinate grid at word offset `grid`, and of the 4-coordinate one.
uvec2 grid_point8(uint grid, uint i) { return uvec2(grid32[grid + 2u * i], grid32[grid + 2u * i + 1u]); }
uint grid_point4(uint grid, uint i) { return grid32[grid + i]; }

struct Chunk { float d[2]; uint v[8]; };  // v[i]: values 4i..4i+3 as signed bytes

// The 8 sign bits of an IQ2/IQ3 group from its 7-bit index (bit 7 makes the count of negatives
// even: ggml's ksigns_iq2xs, iq_grids.h's iq_signs).
uint iq_sign_bits(uint index7) {
  uint i = index7 & 127u;
  return i | ((uint(bitCount(i)) & 1u) << 7);
}

// The four bytes of `point` with byte j negated where bit j of `signs` is set. The bytes are
// grid coordinates, never 0, so 256 - b borrows from no neighbour.
uint iq_signed(uint point, uint signs) {
  uint m = ((signs & 15u) * 0x00204081u & 0x01010101u) * 0xFFu;
  return (point ^ m) + (m & 0x01010101u);
}

void decode8(Chunk k, uint part, uint g, out vec4 lo, out vec4 hi) {
  float d = k.d[g >> 1];
  lo = d * i8x4(k.v[2u * g]);
  hi = d * i8x4(k.v[2u * g + 1u]);
}

#ifdef Q8_DOT
// dx * (d_lo * sum_lo v x + d_hi * sum_hi v x) over the group's two halves.
float q8_part_dot(Chunk k, uint part, XBlock xb) {
  int s0 = (sdot4(xb.q[0], k.v[0]) + sdot4(xb.q[1], k.v[1])) + (sdot4(xb.q[2], k.v[2]) + sdot4(xb.q[3], k.v[3]));
  int s1 = (sdot4(xb.q[4], k.v[4]) + sdot4(xb.q[5], k.v[5])) + (sdot4(xb.q[6], k.v[6]) + sdot4(xb.q[7], k.v[7]));
  return xb.d * (k.d[0] * float(s0) + k.d[1] * float(s1));
}
#endif

#endif
