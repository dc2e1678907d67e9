// TQ1_0 (GGUF-FORMATS.md 3.17): 54-byte blocks {u8 qs[48]; u8 qh[4]; f16 d}, five (qs) or four
// (qh) base-3 digits per byte: digit p of byte v is ((v * 3^p mod 256) * 3) >> 8. Elements
// 0..159: digit e/32 of qs[e%32]; 160..239: digit (e-160)/16 of qs[32 + (e-160)%16]; 240..255:
// digit (e-240)/4 of qh[(e-240)%4]; x = (t - 1) * d. One chunk = the whole block (14 words).
#include "types/common.glsl"
#define QK 256
#define BLOCK_BYTES 54
#define CHUNK 256
#define ROW_ALIGN 2

struct Chunk { uint a[14]; };

void load_chunk(uint row_byte, uint c, out Chunk k) { LOAD_ALIGNED(k.a, 14, row_byte + c * 54u, true); }

vec4 tq1_digits(uvec4 v, uvec4 pow3, float d) {
  uvec4 t = (((v * pow3) & 0xFFu) * 3u) >> 8;
  return vec4(ivec4(t) - 1) * d;
}

void decode8(Chunk k, uint g, out vec4 lo, out vec4 hi) {
  const uint pow3[5] = uint[5](1u, 3u, 9u, 27u, 81u);
  float d = half_lo(k.a[13]);
  if (g < 20u) {
    uvec4 p = uvec4(pow3[g >> 2]);
    lo = tq1_digits(bits4(k.a[2u * (g & 3u)], 0u, 0xFFu), p, d);
    hi = tq1_digits(bits4(k.a[2u * (g & 3u) + 1u], 0u, 0xFFu), p, d);
  } else if (g < 30u) {
    uint gp = g - 20u;
    uvec4 p = uvec4(pow3[gp >> 1]);
    lo = tq1_digits(bits4(k.a[8u + 2u * (gp & 1u)], 0u, 0xFFu), p, d);
    hi = tq1_digits(bits4(k.a[8u + 2u * (gp & 1u) + 1u], 0u, 0xFFu), p, d);
  } else {
    uint gp = g - 30u;
    uvec4 qh = bits4(k.a[12], 0u, 0xFFu);
    lo = tq1_digits(qh, uvec4(pow3[2u * gp]), d);
    hi = tq1_digits(qh, uvec4(pow3[2u * gp + 1u]), d);
  }
}
