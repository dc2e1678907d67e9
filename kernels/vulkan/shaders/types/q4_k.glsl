// Q4_K (GGUF-FORMATS.md 3.11): 144-byte blocks {f16 d; f16 dmin; u8 scales[12]; u8 qs[128]}.
// Sub-block s (32 values) has a 6-bit scale sc and min mn (scale_min_k4); element e's nibble is
// the low (e%64 < 32) or high half of qs[32(e/64) + e%32]; x = (d * sc) * q - dmin * mn (exact
// products). One chunk = 64 values (two sub-blocks): three 16-byte reads (rows 16-aligned).
#include "types/common.glsl"
#include "types/k4_scales.glsl"
#define QK 256
#define BLOCK_BYTES 144
#define CHUNK 64
#define ROW_ALIGN 16

struct Chunk { float d1[2], m1[2]; uint q[8]; };

void load_chunk(uint row_byte, uint c, out Chunk k) {
  uint cc = c & 3u;
  uint v = (row_byte >> 4) + (c >> 2) * 9u;
  k4_scale_min(w128[v], cc, k.d1, k.m1);
  uvec4 q0 = w128[v + 1u + 2u * cc], q1 = w128[v + 2u + 2u * cc];
  k.q[0] = q0.x; k.q[1] = q0.y; k.q[2] = q0.z; k.q[3] = q0.w;
  k.q[4] = q1.x; k.q[5] = q1.y; k.q[6] = q1.z; k.q[7] = q1.w;
}

// part = sub-block of the chunk (low nibbles, then high), g4 = 8-value group in it.
void decode8(Chunk k, uint part, uint g4, out vec4 lo, out vec4 hi) {
  uint w = 2u * g4, shift = 4u * part;
  float d1 = part == 0u ? k.d1[0] : k.d1[1], m1 = part == 0u ? k.m1[0] : k.m1[1];
  lo = d1 * vec4(bits4(k.q[w], shift, 15u)) - m1;
  hi = d1 * vec4(bits4(k.q[w + 1u], shift, 15u)) - m1;
}

#ifdef Q8_DOT
// Sub-block `part` of the chunk: dx * (d * sc * sum q x - dmin * mn * sum x).
float q8_part_dot(Chunk k, uint part, XBlock xb) {
  int s = 0;
  [[unroll]] for (uint i = 0u; i < 8u; ++i) s += sudot4(xb.q[i], (k.q[i] >> (4u * part)) & 0x0F0F0F0Fu);
  float d1 = part == 0u ? k.d1[0] : k.d1[1], m1 = part == 0u ? k.m1[0] : k.m1[1];
  return xb.d * (d1 * float(s) - m1 * float(xb.sum));
}
#endif
