// TQ2_0 (GGUF-FORMATS.md 3.18): 66-byte blocks {u8 qs[64]; f16 d}; element e: c = e/128,
// k = (e%128)/32, m = e%32: q = (qs[32c + m] >> 2k) & 3, x = (q - 1) * d. One chunk = the
// whole block (17 words).
#include "types/common.glsl"
#define QK 256
#define BLOCK_BYTES 66
#define CHUNK 256
#define ROW_ALIGN 2

struct Chunk { uint a[17]; };

void load_chunk(uint row_byte, uint c, out Chunk k) { LOAD_ALIGNED(k.a, 17, row_byte + c * 66u, true); }

// Values 8g.. with g = 4 part + g4: c = part / 4, k = part % 4, m = 8 g4 + i.
void decode8(Chunk k, uint part, uint g4, out vec4 lo, out vec4 hi) {
  float d = half_lo(k.a[16]);
  uint w0 = part < 4u ? k.a[2u * g4] : k.a[8u + 2u * g4];
  uint w1 = part < 4u ? k.a[2u * g4 + 1u] : k.a[9u + 2u * g4];
  uint shift = 2u * (part & 3u);
  lo = vec4(ivec4(bits4(w0, shift, 3u)) - 1) * d;
  hi = vec4(ivec4(bits4(w1, shift, 3u)) - 1) * d;
}

#ifdef Q8_DOT
// The 32-value group `part`: dx * d * (sum u x - sum x), u = q + 1 unsigned.
float q8_part_dot(Chunk k, uint part, XBlock xb) {
  int s = 0;
  [[unroll]] for (uint i = 0u; i < 8u; ++i) {
    uint w = part < 4u ? k.a[i] : k.a[8u + i];
    s += sudot4(xb.q[i], (w >> (2u * (part & 3u))) & 0x03030303u);
  }
  return xb.d * (half_lo(k.a[16]) * float(s - xb.sum));
}
#endif
