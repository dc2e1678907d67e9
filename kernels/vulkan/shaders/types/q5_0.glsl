// Q5_0 (GGUF-FORMATS.md 3.4): 22-byte blocks {f16 d; u32 qh; u8 qs[16]}; element e has Q4_0's
// nibble plus bit e of qh as bit 4; x = (q - 16) * d. One chunk = one block (6 words).
#include "types/common.glsl"
#define QK 32
#define BLOCK_BYTES 22
#define CHUNK 32
#define ROW_ALIGN 2

struct Chunk { float d; uint qh; uint q[4]; };

void load_chunk(uint row_byte, uint c, out Chunk k) {
  uint a[6];
  LOAD_ALIGNED(a, 6, row_byte + c * 22u, true);
  k.d = half_lo(a[0]);
  k.qh = funnel16(a[0], a[1]);
  [[unroll]] for (uint i = 0u; i < 4u; ++i) k.q[i] = funnel16(a[i + 1u], a[i + 2u]);
}

// The high bits of elements 8g..8g+7 as bit 4 of each lane.
uvec4 q5_high(uint qh, uint first) { return ((uvec4(qh) >> (uvec4(0u, 1u, 2u, 3u) + first)) & 1u) << 4; }

void decode8(Chunk k, uint part, uint g, out vec4 lo, out vec4 hi) {
  uint w = 2u * (g & 1u), shift = 4u * (g >> 1);
  lo = vec4(ivec4(bits4(k.q[w], shift, 15u) | q5_high(k.qh, 8u * g)) - 16) * k.d;
  hi = vec4(ivec4(bits4(k.q[w + 1u], shift, 15u) | q5_high(k.qh, 8u * g + 4u)) - 16) * k.d;
}

#ifdef Q8_DOT
#include "types/q5_ints.glsl"
// dx * d * (sum u x - 16 sum x) over the block, u = nibble | high bit << 4.
float q8_part_dot(Chunk k, uint part, XBlock xb) {
  return xb.d * (k.d * float(q5_sum_ux(k, xb) - 16 * xb.sum));
}
#endif
