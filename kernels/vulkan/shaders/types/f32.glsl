// F32 weights: chunks of 8 values (two 16-byte reads). Rows 16-byte aligned.
#include "types/common.glsl"
#define QK 1
#define BLOCK_BYTES 4
#define CHUNK 8
#define ROW_ALIGN 16

struct Chunk { uvec4 a, b; };

void load_chunk(uint row_byte, uint c, out Chunk k) {
  uint q = (row_byte >> 4) + 2u * c;
  k.a = w128[q];
  k.b = w128[q + 1u];
}

void decode8(Chunk k, uint g, out vec4 lo, out vec4 hi) {
  lo = uintBitsToFloat(k.a);
  hi = uintBitsToFloat(k.b);
}
