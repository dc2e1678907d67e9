// IQ4_NL (GGUF-FORMATS.md 3.15): Q4_0's layout with the nibble indexing a fixed table of 16
// int8 levels; x = d * table[q]. One chunk = one block (5 words).
#include "types/common.glsl"
#define QK 32
#define BLOCK_BYTES 18
#define CHUNK 32
#define ROW_ALIGN 2

struct Chunk { float d; uint q[4]; };

void load_chunk(uint row_byte, uint c, out Chunk k) {
  uint a[5];
  LOAD_ALIGNED(a, 5, row_byte + c * 18u, true);
  k.d = half_lo(a[0]);
  [[unroll]] for (uint i = 0u; i < 4u; ++i) k.q[i] = funnel16(a[i], a[i + 1u]);
}

#include "types/iq4_levels.glsl"
#define LEVEL_BYTES iq4nl_level_bytes
#include "types/nibble_table.glsl"
