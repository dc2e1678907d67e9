// Q4_0 (GGUF-FORMATS.md 3.2): 18-byte blocks {f16 d; u8 qs[16]}; byte j holds element j (low
// nibble) and j + 16 (high nibble); x = (q - 8) * d. One chunk = one block (5 words).
#include "types/common.glsl"
#define QK 32
#define BLOCK_BYTES 18
#define CHUNK 32
#define ROW_ALIGN 2

struct Chunk { float d; uint q[4]; };  // q[i]: qs bytes 4i..4i+3

void load_chunk(uint row_byte, uint c, out Chunk k) {
  uint a[5];
  LOAD_ALIGNED(a, 5, row_byte + c * 18u, true);
  k.d = half_lo(a[0]);
  [[unroll]] for (uint i = 0u; i < 4u; ++i) k.q[i] = funnel16(a[i], a[i + 1u]);
}

// g = 0, 1: low nibbles of qs[8g..8g+7]; g = 2, 3: high nibbles of qs[8(g-2)..].
void decode8(Chunk k, uint part, uint g, out vec4 lo, out vec4 hi) {
  uint w = 2u * (g & 1u), shift = 4u * (g >> 1);
  lo = vec4(ivec4(bits4(k.q[w], shift, 15u)) - 8) * k.d;
  hi = vec4(ivec4(bits4(k.q[w + 1u], shift, 15u)) - 8) * k.d;
}

#ifdef Q8_DOT
// dx * d * (sum u x - 8 sum x) over the block, u = the nibbles (q + 8) as unsigned bytes: word i
// of qs holds values 4i.. (low nibbles) and 16 + 4i.. (high).
float q8_part_dot(Chunk k, uint part, XBlock xb) {
  int s = 0;
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    s += sudot4(xb.q[i], k.q[i] & 0x0F0F0F0Fu) + sudot4(xb.q[4u + i], (k.q[i] >> 4) & 0x0F0F0F0Fu);
  }
  return xb.d * (k.d * float(s - 8 * xb.sum));
}
#endif
