// Q4_1 (GGUF-FORMATS.md 3.3): 20-byte blocks {f16 d; f16 m; u8 qs[16]}, Q4_0's nibble order;
// x = q * d + m (the product is exact, so a fused multiply-add gives the same value). One chunk
// = one block (5 words, 4-aligned).
#include "types/common.glsl"
#define QK 32
#define BLOCK_BYTES 20
#define CHUNK 32
#define ROW_ALIGN 4

struct Chunk { float d, m; uint q[4]; };

void load_chunk(uint row_byte, uint c, out Chunk k) {
  uint w = (row_byte >> 2) + c * 5u;
  uint dm = w32[w];
  k.d = half_lo(dm);
  k.m = half_hi(dm);
  [[unroll]] for (uint i = 0u; i < 4u; ++i) k.q[i] = w32[w + 1u + i];
}

void decode8(Chunk k, uint part, uint g, out vec4 lo, out vec4 hi) {
  uint w = 2u * (g & 1u), shift = 4u * (g >> 1);
  lo = vec4(bits4(k.q[w], shift, 15u)) * k.d + k.m;
  hi = vec4(bits4(k.q[w + 1u], shift, 15u)) * k.d + k.m;
}

#ifdef Q8_DOT
// dx * (d * sum u x + m * sum x) over the block (Q4_0's nibble order).
float q8_part_dot(Chunk k, uint part, XBlock xb) {
  int s = 0;
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    s += sudot4(xb.q[i], k.q[i] & 0x0F0F0F0Fu) + sudot4(xb.q[4u + i], (k.q[i] >> 4) & 0x0F0F0F0Fu);
  }
  return xb.d * (k.d * float(s) + k.m * float(xb.sum));
}
#endif
