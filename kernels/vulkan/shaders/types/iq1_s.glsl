// IQ1_S (ggml's block_iq1_s): 50-byte super-blocks {f16 d; u8 qs[32]; u16 qh[8]}. Group g (32
// values): points qs[4g + l] | ((qh[g] >> 3l) & 7) << 8, the delta -1/8 where bit 15 of qh[g] is
// set (else +1/8), scale (d / 8) * (2s + 1) with s = bits 12..14 of qh[g].
#include "types/common.glsl"
#include "types/iq_grid_values.glsl"
#include "types/iq1_values.glsl"
#define BLOCK_BYTES 50
#define ROW_ALIGN 2

void load_chunk(uint row_byte, uint c, out Chunk k) {
  uint b = row_byte + (c >> 3) * 50u, g = c & 7u;
  uint qs = load_u32(b + 2u + 4u * g), qh = load_u16(b + 34u + 2u * g);
  k.d[0] = k.d[1] = (load_f16(b) * 0.125) * float(2u * ((qh >> 12) & 7u) + 1u);
  bool negative = (qh & 0x8000u) != 0u;
  [[unroll]] for (uint l = 0u; l < 4u; ++l) {
    uvec2 v = iq1_values(((qs >> (8u * l)) & 255u) | (((qh >> (3u * l)) & 7u) << 8), negative);
    k.v[2u * l] = v.x;
    k.v[2u * l + 1u] = v.y;
  }
}
