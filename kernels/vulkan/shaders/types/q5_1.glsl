// Q5_1 (GGUF-FORMATS.md 3.5): 24-byte blocks {f16 d; f16 m; u32 qh; u8 qs[16]}, Q5_0's bit
// layout; x = q * d + m (exact product). One chunk = one block (6 words, 4-aligned).
#include "types/common.glsl"
#define QK 32
#define BLOCK_BYTES 24
#define CHUNK 32
#define ROW_ALIGN 4

struct Chunk { float d, m; uint qh; uint q[4]; };

void load_chunk(uint row_byte, uint c, out Chunk k) {
  uint w = (row_byte >> 2) + c * 6u;
  uint dm = w32[w];
  k.d = half_lo(dm);
  k.m = half_hi(dm);
  k.qh = w32[w + 1u];
  [[unroll]] for (uint i = 0u; i < 4u; ++i) k.q[i] = w32[w + 2u + i];
}

uvec4 q5_high(uint qh, uint first) { return ((uvec4(qh) >> (uvec4(0u, 1u, 2u, 3u) + first)) & 1u) << 4; }

void decode8(Chunk k, uint part, uint g, out vec4 lo, out vec4 hi) {
  uint w = 2u * (g & 1u), shift = 4u * (g >> 1);
  lo = vec4(bits4(k.q[w], shift, 15u) | q5_high(k.qh, 8u * g)) * k.d + k.m;
  hi = vec4(bits4(k.q[w + 1u], shift, 15u) | q5_high(k.qh, 8u * g + 4u)) * k.d + k.m;
}

#ifdef Q8_DOT
#include "types/q5_ints.glsl"
// dx * (d * sum u x + m * sum x) over the block, u = nibble | high bit << 4.
float q8_part_dot(Chunk k, uint part, XBlock xb) {
  return xb.d * (k.d * float(q5_sum_ux(k, xb)) + k.m * float(xb.sum));
}
#endif
