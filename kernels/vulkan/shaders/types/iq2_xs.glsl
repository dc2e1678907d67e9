// IQ2_XS (ggml's block_iq2_xs): 74-byte super-blocks {f16 d; u16 qs[32]; u8 scales[8]}. Group g
// (32 values) has the four qs words 4g..4g+3 (grid index: bits 0..8, sign index: bits 9..15) and
// scale byte g, whose nibbles s give the halves' scales (d / 8) * (2s + 1).
#include "types/common.glsl"
#include "types/iq_grid_values.glsl"
#define BLOCK_BYTES 74
#define ROW_ALIGN 2

void load_chunk(uint row_byte, uint c, out Chunk k) {
  uint b = row_byte + (c >> 3) * 74u, g = c & 7u;
  uint q[2] = uint[2](load_u32(b + 2u + 8u * g), load_u32(b + 6u + 8u * g));
  uint sc = load_u8(b + 66u + g);
  float unit = load_f16(b) * 0.125;
  k.d[0] = unit * float(2u * (sc & 15u) + 1u);
  k.d[1] = unit * float(2u * (sc >> 4) + 1u);
  [[unroll]] for (uint l = 0u; l < 4u; ++l) {
    uint ql = (q[l >> 1] >> (16u * (l & 1u))) & 0xFFFFu;
    uvec2 p = grid_point8(IQ_GRID_IQ2XS, ql & 511u);
    uint s = iq_sign_bits(ql >> 9);
    k.v[2u * l] = iq_signed(p.x, s);
    k.v[2u * l + 1u] = iq_signed(p.y, s >> 4);
  }
}
