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
// the low nibbles of the four bytes of `nibbles`, as four bytes: selected with comparisons and
// a shift instead of an indexed table (an indexed constant array is a memory gather on CPU
// drivers).
uint iq4nl_level_bytes(uint nibbles) {
  const uint t0 = 0xBFAD9881u, t1 = 0xF6EADDCFu, t2 = 0x26190D01u, t3 = 0x71594535u;
  uvec4 q = (uvec4(nibbles) >> uvec4(0u, 8u, 16u, 24u)) & 15u;
  uvec4 w = mix(mix(uvec4(t0), uvec4(t1), greaterThanEqual(q, uvec4(4u))),
                mix(uvec4(t2), uvec4(t3), greaterThanEqual(q, uvec4(12u))), greaterThanEqual(q, uvec4(8u)));
  uvec4 b = ((w >> (8u * (q & 3u))) & 0xFFu) << uvec4(0u, 8u, 16u, 24u);
  return b.x | b.y | b.z | b.w;
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
