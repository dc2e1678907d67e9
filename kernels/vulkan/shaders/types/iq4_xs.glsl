// IQ4_XS (GGUF-FORMATS.md; ggml's block_iq4_xs): 136-byte super-blocks of 256 values {f16 d;
// u16 scales_h; u8 scales_l[4]; u8 qs[128]}. Group g (32 values) has the 6-bit scale
// ls = nibble g of scales_l | bits 2g, 2g + 1 of scales_h << 4 and its 16 qs bytes laid out as an
// IQ4_NL block's; x = (d * (ls - 32)) * level[q] (one rounded product, then an exact one). One
// chunk = one group: the block's two head words and the group's four qs words.
#include "types/common.glsl"
#define QK 256
#define BLOCK_BYTES 136
#define CHUNK 32
#define ROW_ALIGN 4

struct Chunk { float d; uint q[4]; };

void load_chunk(uint row_byte, uint c, out Chunk k) {
  uint base = (row_byte >> 2) + (c >> 3) * 34u, g = c & 7u;
  uint head = w32[base];
  uint ls = ((w32[base + 1u] >> (4u * g)) & 15u) | (((head >> (16u + 2u * g)) & 3u) << 4);
  k.d = half_lo(head) * float(int(ls) - 32);
  [[unroll]] for (uint i = 0u; i < 4u; ++i) k.q[i] = w32[base + 2u + 4u * g + i];
}

#include "types/iq4_levels.glsl"
#define LEVEL_BYTES iq4nl_level_bytes
#include "types/nibble_table.glsl"
