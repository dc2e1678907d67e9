// IQ2_XXS (ggml's block_iq2_xxs): 66-byte super-blocks {f16 d; u16 qs[32]}. Group g (32 values)
// is 8 bytes at 2 + 8g: four grid indices (bytes 0..3) and a word w whose bits 7l..7l+6 index
// the signs of point l and whose top nibble s gives the scale (d / 8) * (2s + 1).
#include "types/common.glsl"
#include "types/iq_grid_values.glsl"
#define BLOCK_BYTES 66
#define ROW_ALIGN 2

void load_chunk(uint row_byte, uint c, out Chunk k) {
  uint b = row_byte + (c >> 3) * 66u, g = c & 7u;
  uint idx = load_u32(b + 2u + 8u * g), w = load_u32(b + 6u + 8u * g);
  k.d[0] = k.d[1] = (load_f16(b) * 0.125) * float(2u * (w >> 28) + 1u);
  [[unroll]] for (uint l = 0u; l < 4u; ++l) {
    uvec2 p = grid_point8(IQ_GRID_IQ2XXS, (idx >> (8u * l)) & 255u);
    uint s = iq_sign_bits(w >> (7u * l));
    k.v[2u * l] = iq_signed(p.x, s);
    k.v[2u * l + 1u] = iq_signed(p.y, s >> 4);
  }
}
