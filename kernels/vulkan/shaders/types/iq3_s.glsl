// IQ3_S (ggml's block_iq3_s): 110-byte super-blocks {f16 d; u8 qs[64]; u8 qh[8]; u8 signs[32];
// u8 scales[4]}. Group g (32 values): 4-coordinate points qs[8g + i] | (bit i of qh[g]) << 8,
// sign bytes signs[4g + l] (bit j negates value 8l + j), scale nibble g of scales giving
// d * (2s + 1).
#include "types/common.glsl"
#include "types/iq_grid_values.glsl"
#define BLOCK_BYTES 110
#define ROW_ALIGN 2

void load_chunk(uint row_byte, uint c, out Chunk k) {
  uint b = row_byte + (c >> 3) * 110u, g = c & 7u;
  uint idx[2] = uint[2](load_u32(b + 2u + 8u * g), load_u32(b + 6u + 8u * g));
  uint qh = load_u8(b + 66u + g), signs = load_u32(b + 74u + 4u * g);
  uint s4 = (load_u8(b + 106u + (g >> 1)) >> (4u * (g & 1u))) & 15u;
  k.d[0] = k.d[1] = load_f16(b) * float(2u * s4 + 1u);
  [[unroll]] for (uint l = 0u; l < 4u; ++l) {
    uint pair = idx[l >> 1] >> (16u * (l & 1u));
    uint s = signs >> (8u * l);
    k.v[2u * l] = iq_signed(grid_point4(IQ_GRID_IQ3S, (pair & 255u) | (((qh >> (2u * l)) & 1u) << 8)), s);
    k.v[2u * l + 1u] = iq_signed(grid_point4(IQ_GRID_IQ3S, ((pair >> 8) & 255u) | (((qh >> (2u * l + 1u)) & 1u) << 8)), s >> 4);
  }
}
