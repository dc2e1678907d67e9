// IQ4_NL (GGUF-FORMATS.md 3.15): Q4_0's layout with the nibble indexing a fixed table of 16
// int8 levels; x = d * table[q]. One chunk = one block (5 words).
#include "types/common.glsl"
#define QK 32
#define BLOCK_BYTES 18
#define CHUNK 32
#define ROW_ALIGN 2

struct Chunk { float d; uint q[4]; };

void load_chunk(uint row_byte, uint c, out Chunk k) {
  uint a[5];
  LOAD_ALIGNED(a, 5, row_byte + c * 18u, true);
  k.d = half_lo(a[0]);
  [[unroll]] for (uint i = 0u; i < 4u; ++i) k.q[i] = funnel16(a[i], a[i + 1u]);
}

// The int8 levels {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113} of
// the low nibbles of the four bytes of `nibbles`, as four bytes.
uint iq4nl_level_bytes(uint nibbles) {
  return nibble_level_bytes(nibbles, 0xBFAD9881u, 0xF6EADDCFu, 0x26190D01u, 0x71594535u);
}

void decode8(Chunk k, uint part, uint g, out vec4 lo, out vec4 hi) {
  uint w = 2u * (g & 1u), shift = 4u * (g >> 1);
  lo = k.d * i8x4(iq4nl_level_bytes(k.q[w] >> shift));
  hi = k.d * i8x4(iq4nl_level_bytes(k.q[w + 1u] >> shift));
}

#ifdef Q8_DOT
// dx * d * sum level x over the block.
float q8_part_dot(Chunk k, uint part, XBlock xb) {
  int s = 0;
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    s += sdot4(xb.q[i], iq4nl_level_bytes(k.q[i])) + sdot4(xb.q[4u + i], iq4nl_level_bytes(k.q[i] >> 4));
  }
  return xb.d * (k.d * float(s));
}
#endif
