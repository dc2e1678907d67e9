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

uvec4 tq1_digits(uvec4 v, uint pow3) { return (((v * pow3) & 0xFFu) * 3u) >> 8; }

uint tq1_pow3(uint p) { return p == 0u ? 1u : p == 1u ? 3u : p == 2u ? 9u : p == 3u ? 27u : 81u; }

// The digits t = q + 1 of values 8g.. with g = 4 part + g4 (part may vary at run time: the
// three regions are selected).
void tq1_trits8(Chunk k, uint part, uint g4, out uvec4 lo, out uvec4 hi) {
  uint g = 4u * part + g4;
  bool in_a = g < 20u, in_b = g < 30u;
  uint gp = in_b ? g - 20u : g - 30u;
  // Region A: qs[8 g4 ..] digit g / 4; B: qs[32 + 8 (gp % 2) ..] digit gp / 2; C: qh digit 2 gp (+1).
  uint wl = in_a ? k.a[2u * g4] : in_b ? ((gp & 1u) == 0u ? k.a[8] : k.a[10]) : k.a[12];
  uint wh = in_a ? k.a[2u * g4 + 1u] : in_b ? ((gp & 1u) == 0u ? k.a[9] : k.a[11]) : k.a[12];
  uint pl = in_a ? part : in_b ? gp >> 1 : 2u * gp;
  uint ph = in_a ? part : in_b ? gp >> 1 : 2u * gp + 1u;
  lo = tq1_digits(bits4(wl, 0u, 0xFFu), tq1_pow3(pl));
  hi = tq1_digits(bits4(wh, 0u, 0xFFu), tq1_pow3(ph));
}

void decode8(Chunk k, uint part, uint g4, out vec4 lo, out vec4 hi) {
  float d = half_lo(k.a[13]);
  uvec4 tl, th;
  tq1_trits8(k, part, g4, tl, th);
  lo = vec4(ivec4(tl) - 1) * d;
  hi = vec4(ivec4(th) - 1) * d;
}

#ifdef Q8_DOT
// The 32-value group `part`: dx * d * (sum t x - sum x), t = q + 1 (the base-3 digit).
float q8_part_dot(Chunk k, uint part, XBlock xb) {
  int s = 0;
  [[unroll]] for (uint g4 = 0u; g4 < 4u; ++g4) {
    uvec4 lo, hi;
    tq1_trits8(k, part, g4, lo, hi);
    s += sudot4(xb.q[2u * g4], lo.x | (lo.y << 8) | (lo.z << 16) | (lo.w << 24)) +
         sudot4(xb.q[2u * g4 + 1u], hi.x | (hi.y << 8) | (hi.z << 16) | (hi.w << 24));
  }
  return xb.d * (half_lo(k.a[13]) * float(s - xb.sum));
}
#endif
