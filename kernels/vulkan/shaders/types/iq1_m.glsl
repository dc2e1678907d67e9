// IQ1_M (ggml's block_iq1_m): 56-byte super-blocks {u8 qs[32]; u8 qh[16]; u16 scales[4]}, the F16
// super-block scale d in the top nibbles of the four scale words. Group g (32 values): points
// qs[4g + l] | (the low or high 3 bits of qh[2g + l / 2]) << 8, each with its own delta (bit 3 or
// 7 of that qh byte set: -1/8); the halves' scales (d / 8) * (2s + 1) with s = bits 6(g % 2) and
// 6(g % 2) + 3 (3 each) of scale word g / 2.
#include "types/common.glsl"
#include "types/iq_grid_values.glsl"
#include "types/iq1_values.glsl"
#define BLOCK_BYTES 56
#define ROW_ALIGN 4

void load_chunk(uint row_byte, uint c, out Chunk k) {
  uint w = (row_byte >> 2) + (c >> 3) * 14u, g = c & 7u;
  uint qs = w32[w + g], qh = (w32[w + 8u + (g >> 1)] >> (16u * (g & 1u))) & 0xFFFFu;
  uint sc01 = w32[w + 12u], sc23 = w32[w + 13u];
  // nibble 3 of each scale word, word i's as nibble i
  uint bits = ((sc01 >> 12) & 0xFu) | ((sc01 >> 24) & 0xF0u) | ((sc23 >> 4) & 0xF00u) | ((sc23 >> 16) & 0xF000u);
  float unit = unpackHalf2x16(bits).x * 0.125;
  uint sw = ((g < 4u ? sc01 : sc23) >> (16u * ((g >> 1) & 1u))) >> (6u * (g & 1u));
  k.d[0] = unit * float(2u * (sw & 7u) + 1u);
  k.d[1] = unit * float(2u * ((sw >> 3) & 7u) + 1u);
  [[unroll]] for (uint l = 0u; l < 4u; ++l) {
    uint h = qh >> (4u * l);  // bits 0..2 (index bits 8..10), bit 3 (negative delta)
    uvec2 v = iq1_values(((qs >> (8u * l)) & 255u) | ((h & 7u) << 8), (h & 8u) != 0u);
    k.v[2u * l] = v.x;
    k.v[2u * l + 1u] = v.y;
  }
}
