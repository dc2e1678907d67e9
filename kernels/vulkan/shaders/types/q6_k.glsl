// Q6_K (GGUF-FORMATS.md 3.13): 210-byte blocks {u8 ql[128]; u8 qh[64]; int8 scales[16]; f16 d}.
// Element e: h = e/128, r = e%128, g = r/32, l = r%32: low 4 bits from ql[64h + 32(g%2) + l]
// (low nibble for g < 2, high for g >= 2), high 2 bits (qh[32h + l] >> 2g) & 3, q = that - 32;
// x = (d * scales[e/16]) * q, in that order (the second product may round). One chunk = one
// 128-value half: ql (16 words), qh (8 words), scales and d (5 words), 2-aligned.
#include "types/common.glsl"
#define QK 256
#define BLOCK_BYTES 210
#define CHUNK 128
#define ROW_ALIGN 2

struct Chunk { float d; uint sc[2]; uint ql[16]; uint qh[8]; };

void load_chunk(uint row_byte, uint c, out Chunk k) {
  uint h = c & 1u;
  uint block = row_byte + (c >> 1) * 210u;
  LOAD_ALIGNED(k.ql, 16, block + 64u * h, false);
  LOAD_ALIGNED(k.qh, 8, block + 128u + 32u * h, false);
  uint sd[5];
  LOAD_ALIGNED(sd, 5, block + 192u, true);
  k.sc[0] = h == 0u ? sd[0] : sd[2];
  k.sc[1] = h == 0u ? sd[1] : sd[3];
  k.d = half_lo(sd[4]);
}

// d * scale of the 16-value sub-block half16 (0, 1) of the 32-value group `part` of the half.
float q6k_scale(Chunk k, uint part, uint half16) {
  uint sh = 8u * ((2u * part + half16) & 3u);
  precise float ds = k.d * float(int((part < 2u ? k.sc[0] : k.sc[1]) << (24u - sh)) >> 24);
  return ds;
}

// part = the 32-value group gg of the half (0..3), g4 = 8-value group in it.
void decode8(Chunk k, uint part, uint g4, out vec4 lo, out vec4 hi) {
  uint ql0 = (part & 1u) == 0u ? k.ql[2u * g4] : k.ql[8u + 2u * g4];
  uint ql1 = (part & 1u) == 0u ? k.ql[2u * g4 + 1u] : k.ql[9u + 2u * g4];
  float ds = q6k_scale(k, part, g4 >> 1);
  uint lshift = 4u * (part >> 1), hshift = 2u * part;
  ivec4 q0 = ivec4(bits4(ql0, lshift, 15u) | (bits4(k.qh[2u * g4], hshift, 3u) << 4)) - 32;
  ivec4 q1 = ivec4(bits4(ql1, lshift, 15u) | (bits4(k.qh[2u * g4 + 1u], hshift, 3u) << 4)) - 32;
  precise vec4 v0 = ds * vec4(q0);
  precise vec4 v1 = ds * vec4(q1);
  lo = v0;
  hi = v1;
}

#ifdef Q8_DOT
// The 32-value group `part` of the half: dx * (s0 * sum_lo q x + s1 * sum_hi q x) over its two
// 16-value sub-blocks, q = u - 32 as signed bytes.
float q8_part_dot(Chunk k, uint part, XBlock xb) {
  uint lshift = 4u * (part >> 1), hshift = 2u * part;
  int s[2] = int[2](0, 0);
  [[unroll]] for (uint i = 0u; i < 8u; ++i) {
    uint ql = (part & 1u) == 0u ? k.ql[i] : k.ql[8u + i];
    uint u = ((ql >> lshift) & 0x0F0F0F0Fu) | (((k.qh[i] >> hshift) & 0x03030303u) << 4);
    s[i >> 2] += sdot4(xb.q[i], minus_bias_bytes(u, 32u));
  }
  return xb.d * (q6k_scale(k, part, 0u) * float(s[0]) + q6k_scale(k, part, 1u) * float(s[1]));
}
#endif
