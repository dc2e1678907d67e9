// Q5_K (GGUF-FORMATS.md 3.12): 176-byte blocks {f16 d; f16 dmin; u8 scales[12]; u8 qh[32];
// u8 qs[128]}: Q4_K plus a fifth bit (qh[e%32] >> (e/32)) & 1 worth 16. One chunk = 64 values:
// five 16-byte reads (rows 16-aligned).
#include "types/common.glsl"
#include "types/k4_scales.glsl"
#define QK 256
#define BLOCK_BYTES 176
#define CHUNK 64
#define ROW_ALIGN 16

struct Chunk { float d1[2], m1[2]; uint q[8]; uint qh[8]; };  // qh bits 2cc, 2cc+1 moved to 0, 1

void load_chunk(uint row_byte, uint c, out Chunk k) {
  uint cc = c & 3u;
  uint v = (row_byte >> 4) + (c >> 2) * 11u;
  k4_scale_min(w128[v], cc, k.d1, k.m1);
  uvec4 h0 = w128[v + 1u], h1 = w128[v + 2u];
  uvec4 q0 = w128[v + 3u + 2u * cc], q1 = w128[v + 4u + 2u * cc];
  k.q[0] = q0.x; k.q[1] = q0.y; k.q[2] = q0.z; k.q[3] = q0.w;
  k.q[4] = q1.x; k.q[5] = q1.y; k.q[6] = q1.z; k.q[7] = q1.w;
  uint sh = 2u * cc;
  k.qh[0] = h0.x >> sh; k.qh[1] = h0.y >> sh; k.qh[2] = h0.z >> sh; k.qh[3] = h0.w >> sh;
  k.qh[4] = h1.x >> sh; k.qh[5] = h1.y >> sh; k.qh[6] = h1.z >> sh; k.qh[7] = h1.w >> sh;
}

// part = sub-block of the chunk, g4 = 8-value group in it.
void decode8(Chunk k, uint part, uint g4, out vec4 lo, out vec4 hi) {
  uint w = 2u * g4, shift = 4u * part;
  float d1 = part == 0u ? k.d1[0] : k.d1[1], m1 = part == 0u ? k.m1[0] : k.m1[1];
  uvec4 n0 = bits4(k.q[w], shift, 15u) | (bits4(k.qh[w], part, 1u) << 4);
  uvec4 n1 = bits4(k.q[w + 1u], shift, 15u) | (bits4(k.qh[w + 1u], part, 1u) << 4);
  lo = d1 * vec4(n0) - m1;
  hi = d1 * vec4(n1) - m1;
}

#ifdef Q8_DOT
// Sub-block `part` of the chunk: dx * (d * sc * sum q x - dmin * mn * sum x), q with its fifth bit.
float q8_part_dot(Chunk k, uint part, XBlock xb) {
  int s = 0;
  [[unroll]] for (uint i = 0u; i < 8u; ++i) {
    s += sudot4(xb.q[i], ((k.q[i] >> (4u * part)) & 0x0F0F0F0Fu) | (((k.qh[i] >> part) & 0x01010101u) << 4));
  }
  float d1 = part == 0u ? k.d1[0] : k.d1[1], m1 = part == 0u ? k.m1[0] : k.m1[1];
  return xb.d * (d1 * float(s) - m1 * float(xb.sum));
}
#endif
