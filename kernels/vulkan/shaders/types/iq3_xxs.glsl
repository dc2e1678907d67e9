// IQ3_XXS (ggml's block_iq3_xxs): 98-byte super-blocks {f16 d; u8 qs[64]; u32 scales_signs[8]}.
// Group g (32 values): eight indices qs[8g..8g+7] of 4-coordinate points (two per 8 values) and
// word w = scales_signs[g], whose bits 7l..7l+6 index the signs of values 8l..8l+7 and whose top
// nibble s gives the scale (d / 4) * (2s + 1).
#include "types/common.glsl"
#include "types/iq_grid_values.glsl"
#define BLOCK_BYTES 98
#define ROW_ALIGN 2

void load_chunk(uint row_byte, uint c, out Chunk k) {
  uint b = row_byte + (c >> 3) * 98u, g = c & 7u;
  uint idx[2] = uint[2](load_u32(b + 2u + 8u * g), load_u32(b + 6u + 8u * g));
  uint w = load_u32(b + 66u + 4u * g);
  k.d[0] = k.d[1] = (load_f16(b) * 0.25) * float(2u * (w >> 28) + 1u);
  [[unroll]] for (uint l = 0u; l < 4u; ++l) {
    uint pair = idx[l >> 1] >> (16u * (l & 1u));
    uint s = iq_sign_bits(w >> (7u * l));
    k.v[2u * l] = iq_signed(grid_point4(IQ_GRID_IQ3XXS, pair & 255u), s);
    k.v[2u * l + 1u] = iq_signed(grid_point4(IQ_GRID_IQ3XXS, (pair >> 8) & 255u), s >> 4);
  }
}
