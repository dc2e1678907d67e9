// IQ2_S (ggml's block_iq2_s): 82-byte super-blocks {f16 d; u8 qs[32]; u8 signs[32]; u8 qh[8];
// u8 scales[8]}. Group g (32 values): grid indices qs[4g + l] | ((qh[g] >> 2l) & 3) << 8, sign
// bytes signs[4g + l] (bit j negates coordinate j of point l), scale byte g whose nibbles s give
// the halves' scales (d / 8) * (2s + 1).
#include "types/common.glsl"
#include "types/iq_grid_values.glsl"
#define BLOCK_BYTES 82
#define ROW_ALIGN 2

void load_chunk(uint row_byte, uint c, out Chunk k) {
  uint b = row_byte + (c >> 3) * 82u, g = c & 7u;
  uint qs = load_u32(b + 2u + 4u * g), signs = load_u32(b + 34u + 4u * g);
  uint qh = load_u8(b + 66u + g), sc = load_u8(b + 74u + g);
  float unit = load_f16(b) * 0.125;
  k.d[0] = unit * float(2u * (sc & 15u) + 1u);
  k.d[1] = unit * float(2u * (sc >> 4) + 1u);
  [[unroll]] for (uint l = 0u; l < 4u; ++l) {
    uvec2 p = grid_point8(IQ_GRID_IQ2S, ((qs >> (8u * l)) & 255u) | (((qh >> (2u * l)) & 3u) << 8));
    uint s = signs >> (8u * l);
    k.v[2u * l] = iq_signed(p.x, s);
    k.v[2u * l + 1u] = iq_signed(p.y, s >> 4);
  }
}
