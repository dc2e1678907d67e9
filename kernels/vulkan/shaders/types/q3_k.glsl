// Q3_K (GGUF-FORMATS.md 3.10): 110-byte blocks {u8 hmask[32]; u8 qs[64]; u8 scales[12]; f16 d}.
// Element e: h = e/128, j = (e%128)/32, l = e%32: low = (qs[32h + l] >> 2j) & 3, high bit
// (hmask[e%32] >> (e/32)) & 1, q = high ? low : low - 4; 6-bit scale S of sub-block s = e/16:
// low 4 bits from scales[s] (s < 8) or scales[s-8] >> 4, high 2 bits (scales[8 + s%4] >> 2(s/4)) & 3;
// x = (d * (S - 32)) * q (exact products). One chunk = the whole block (28 words, 2-aligned).
#include "types/common.glsl"
#define QK 256
#define BLOCK_BYTES 110
#define CHUNK 256
#define ROW_ALIGN 2

struct Chunk { uint a[28]; };  // block bytes 4i..4i+3

void load_chunk(uint row_byte, uint c, out Chunk k) { LOAD_ALIGNED(k.a, 28, row_byte + c * 110u, true); }

// d * (S - 32) of the 16-value sub-block s.
float q3k_scale(Chunk k, uint s) {
  uint sw = (s & 7u) < 4u ? k.a[24] : k.a[25];  // scales[s % 8]
  uint low4 = (sw >> (8u * (s & 3u) + 4u * (s >> 3))) & 15u;
  uint high2 = (k.a[26] >> (8u * (s & 3u) + 2u * (s >> 2))) & 3u;
  return half_lo(k.a[27]) * float(int(low4 | (high2 << 4)) - 32);
}

void decode8(Chunk k, uint part, uint g4, out vec4 lo, out vec4 hi) {
  // elements 8g.. (g = 4 part + g4) = 128h + 32j + 8 g4 + i with h = part / 4, j = part % 4
  uint h = part >> 2, j = part & 3u;
  float dl = q3k_scale(k, 2u * part + (g4 >> 1));
  uint q0w = h == 0u ? k.a[8u + 2u * g4] : k.a[16u + 2u * g4];
  uint q1w = h == 0u ? k.a[9u + 2u * g4] : k.a[17u + 2u * g4];
  ivec4 q0 = ivec4(bits4(q0w, 2u * j, 3u)) - 4 + 4 * ivec4(bits4(k.a[2u * g4], part, 1u));
  ivec4 q1 = ivec4(bits4(q1w, 2u * j, 3u)) - 4 + 4 * ivec4(bits4(k.a[2u * g4 + 1u], part, 1u));
  lo = dl * vec4(q0);
  hi = dl * vec4(q1);
}

#ifdef Q8_DOT
// The 32-value group `part`: dx * (dl_lo * sum_lo q x + dl_hi * sum_hi q x) over its two
// 16-value sub-blocks, q = u - 4 as signed bytes.
float q8_part_dot(Chunk k, uint part, XBlock xb) {
  uint h = part >> 2, j = part & 3u;
  int s[2] = int[2](0, 0);
  [[unroll]] for (uint i = 0u; i < 8u; ++i) {
    uint qw = h == 0u ? k.a[8u + i] : k.a[16u + i];
    uint u = ((qw >> (2u * j)) & 0x03030303u) | (((k.a[i] >> part) & 0x01010101u) << 2);
    s[i >> 2] += sdot4(xb.q[i], minus_bias_bytes(u, 4u));
  }
  return xb.d * (q3k_scale(k, 2u * part) * float(s[0]) + q3k_scale(k, 2u * part + 1u) * float(s[1]));
}
#endif
