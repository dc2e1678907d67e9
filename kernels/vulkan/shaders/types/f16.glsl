// F16 weights: chunks of 8 values (one 16-byte read). Rows 16-byte aligned when the
// row length is a multiple of 8; load_value reads any row.
#include "types/common.glsl"
#define QK 1
#define BLOCK_BYTES 2
#define CHUNK 8
#define ROW_ALIGN 16

struct Chunk { uvec4 a; };

void load_chunk(uint row_byte, uint c, out Chunk k) { k.a = w128[(row_byte >> 4) + c]; }

void decode8(Chunk k, uint part, uint g, out vec4 lo, out vec4 hi) {
  lo = vec4(unpackHalf2x16(k.a.x), unpackHalf2x16(k.a.y));
  hi = vec4(unpackHalf2x16(k.a.z), unpackHalf2x16(k.a.w));
}

// Value c of the row at row_byte (any alignment of the type's values): the path for rows whose
// length is not a multiple of 8 (tiny models, e.g. stories260K's 172-column F32 matrices).
float load_value(uint row_byte, uint c) { return load_f16(row_byte + 2u * c); }
