// F32 weights: chunks of 8 values (two 16-byte reads). Rows 16-byte aligned when the
// row length is a multiple of 8; load_value reads any row.
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

void decode8(Chunk k, uint part, uint g, out vec4 lo, out vec4 hi) {
  lo = uintBitsToFloat(k.a);
  hi = uintBitsToFloat(k.b);
}

// Value c of the row at row_byte (any alignment of the type's values): the path for rows whose
// length is not a multiple of 8 (tiny models, e.g. stories260K's 172-column F32 matrices).
float load_value(uint row_byte, uint c) { return uintBitsToFloat(w32[(row_byte >> 2) + c]); }
