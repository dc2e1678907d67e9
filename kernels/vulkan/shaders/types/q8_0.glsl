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

// Integer form (matvec_q8.comp): values [8g, 8g + 8) are d * q with q the signed bytes of ints8.
#define Q8_OFFSET 0
#define INTS_SIGNED 1
float chunk_min(Chunk k) { return 0.0; }
uvec2 ints8(Chunk k, uint g) { return uvec2(k.q[2u * g], k.q[2u * g + 1u]); }
