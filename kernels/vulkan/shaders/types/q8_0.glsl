// Q8_0 (GGUF-FORMATS.md 3.6): 34-byte blocks {f16 d; int8 qs[32]}, x = q * d. One chunk = one
// block, read as 9 words from a 2-aligned address.
#include "types/common.glsl"
#define QK 32
#define BLOCK_BYTES 34
#define CHUNK 32
#define ROW_ALIGN 2

struct Chunk { float d; uint q[8]; };  // q[i]: qs bytes 4i..4i+3

void load_chunk(uint row_byte, uint c, out Chunk k) {
  uint a[9];
  LOAD_ALIGNED(a, 9, row_byte + c * 34u, true);
  k.d = half_lo(a[0]);
  [[unroll]] for (uint i = 0u; i < 8u; ++i) k.q[i] = funnel16(a[i], a[i + 1u]);
}

void decode8(Chunk k, uint part, uint g, out vec4 lo, out vec4 hi) {
  lo = i8x4(k.q[2u * g]) * k.d;
  hi = i8x4(k.q[2u * g + 1u]) * k.d;
}

#ifdef Q8_DOT
// dx * d * sum q x over the block.
float q8_part_dot(Chunk k, uint part, XBlock xb) {
  int s = 0;
  [[unroll]] for (uint i = 0u; i < 8u; ++i) s += sdot4(xb.q[i], k.q[i]);
  return xb.d * (k.d * float(s));
}
#endif
