// Q2_K (GGUF-FORMATS.md 3.9): 84-byte blocks {u8 scales[16]; u8 qs[64]; f16 d; f16 dmin}.
// Element e: h = e/128, j = (e%128)/32, l = e%32: q = (qs[32h + l] >> 2j) & 3; scale byte
// s = scales[e/16]; x = (d * (s & 15)) * q - dmin * (s >> 4) (exact products). One chunk = one
// 128-value half (11 words, 4-aligned).
#include "types/common.glsl"
#define QK 256
#define BLOCK_BYTES 84
#define CHUNK 128
#define ROW_ALIGN 4

struct Chunk { float d, dmin; uint sc[2]; uint q[8]; };

void load_chunk(uint row_byte, uint c, out Chunk k) {
  uint h = c & 1u;
  uint w = (row_byte >> 2) + (c >> 1) * 21u;
  k.sc[0] = w32[w + 2u * h];
  k.sc[1] = w32[w + 2u * h + 1u];
  [[unroll]] for (uint i = 0u; i < 8u; ++i) k.q[i] = w32[w + 4u + 8u * h + i];
  uint dd = w32[w + 20u];
  k.d = half_lo(dd);
  k.dmin = half_hi(dd);
}

// The scale byte of values 8g..8g+7 of the half: byte g/2 of the half's eight.
uint q2k_scale_byte(Chunk k, uint g) { return ((g < 8u ? k.sc[0] : k.sc[1]) >> (8u * ((g >> 1) & 3u))) & 0xFFu; }

// Values 8g..8g+7 of the half, g = 4 part + g4: j = part, l = 8 g4...
void decode8(Chunk k, uint part, uint g4, out vec4 lo, out vec4 hi) {
  uint s = q2k_scale_byte(k, 4u * part + g4);
  float dl = k.d * float(s & 15u);
  float ml = k.dmin * float(s >> 4);
  uint w = 2u * g4, shift = 2u * part;
  lo = dl * vec4(bits4(k.q[w], shift, 3u)) - ml;
  hi = dl * vec4(bits4(k.q[w + 1u], shift, 3u)) - ml;
}

#ifdef Q8_DOT
// The 32-value group `part` of the half: per 16-value sub-block, dx * (d * sc * sum q x -
// dmin * mn * sum x).
float q8_part_dot(Chunk k, uint part, XBlock xb) {
  int s[2] = int[2](0, 0);
  [[unroll]] for (uint i = 0u; i < 8u; ++i) s[i >> 2] += sudot4(xb.q[i], (k.q[i] >> (2u * part)) & 0x03030303u);
  const int x_lo = sum16_lo(xb);
  const int xs[2] = int[2](x_lo, xb.sum - x_lo);
  float acc = 0.0;
  [[unroll]] for (uint h = 0u; h < 2u; ++h) {
    uint sc = q2k_scale_byte(k, 4u * part + 2u * h);
    acc += (k.d * float(sc & 15u)) * float(s[h]) - (k.dmin * float(sc >> 4)) * float(xs[h]);
  }
  return xb.d * acc;
}
#endif
