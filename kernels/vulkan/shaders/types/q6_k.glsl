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

void decode8(Chunk k, uint g, out vec4 lo, out vec4 hi) {
  uint gg = g >> 2, l4 = g & 3u;
  uint lw = 8u * (gg & 1u) + 2u * l4, hw = 2u * l4;
  uint sh = 8u * ((g >> 1) & 3u);
  precise float ds = k.d * float(int(k.sc[g >> 3] << (24u - sh)) >> 24);
  ivec4 q0 = ivec4(bits4(k.ql[lw], 4u * (gg >> 1), 15u) | (bits4(k.qh[hw], 2u * gg, 3u) << 4)) - 32;
  ivec4 q1 = ivec4(bits4(k.ql[lw + 1u], 4u * (gg >> 1), 15u) | (bits4(k.qh[hw + 1u], 2u * gg, 3u) << 4)) - 32;
  precise vec4 v0 = ds * vec4(q0);
  precise vec4 v1 = ds * vec4(q1);
  lo = v0;
  hi = v1;
}
