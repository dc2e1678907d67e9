// F16_2OF4 (ours, kernels/cpu/sparse24.h): 36-byte blocks {f16 values[16]; u8 pos[4]}: of every
// 4 weights the 2 kept values in ascending position; group g's positions in nibble g % 2 of
// pos[g / 2] (bits 0-1 the first kept value's, 2-3 the second's). One chunk = one block (9
// words, 4-aligned): only the kept values and their positions are read.
#include "types/common.glsl"
#define QK 32
#define BLOCK_BYTES 36
#define CHUNK 32
#define ROW_ALIGN 4

struct Chunk { uint v[8]; uint pos; };  // v[g]: group g's two kept values (F16 pair)

void load_chunk(uint row_byte, uint c, out Chunk k) {
  uint w = (row_byte >> 2) + c * 9u;
  [[unroll]] for (uint i = 0u; i < 8u; ++i) k.v[i] = w32[w + i];
  k.pos = w32[w + 8u];
}

// A group's 4 weights from its two kept values and its position nibble.
vec4 expand_group(uint values, uint nib) {
  vec2 v = unpackHalf2x16(values);
  vec4 r = vec4(0.0);
  r[nib & 3u] = v.x;
  r[nib >> 2] = v.y;
  return r;
}

void decode8(Chunk k, uint part, uint g, out vec4 lo, out vec4 hi) {
  uint byte = (k.pos >> (8u * g)) & 0xFFu;
  lo = expand_group(k.v[2u * g], byte & 15u);
  hi = expand_group(k.v[2u * g + 1u], byte >> 4);
}
