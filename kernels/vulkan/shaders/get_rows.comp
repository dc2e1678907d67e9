#version 450
#include "header.glsl"
// Embedding lookup: out[i][c] = dequant(table row ids[i])[c] * scale, for i < n, c < cols.
// One workgroup per output row (x, folded into z past the dispatch limit); invocations take
// whole chunks of the row. Bindings: 0 table (weight rows), 1 ids (int32 [n]), 2 out (f32
// [n][out_stride], 16-byte aligned rows). A row id outside [0, n_rows) gives a row of zeros.
// Preconditions (host): cols % CHUNK == 0, out_stride % 4 == 0, row starts ROW_ALIGN-aligned.
#define WEIGHT_BINDING 0
#include "weights.glsl"
#include "types/select_type.glsl"

layout(std430, set = 0, binding = 1) readonly buffer Ids { int ids[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { vec4 out4[]; };

layout(push_constant) uniform Push {
  uint cols;        // values per row
  uint row_bytes;   // bytes per table row
  uint w_offset;    // byte offset of table row 0 in binding 0
  uint n;           // output rows
  uint out_stride;  // floats between output rows
  uint n_rows;      // table rows
  float scale;
} p;

void main() {
  uint i = gl_WorkGroupID.x + gl_WorkGroupID.z * gl_NumWorkGroups.x;
  if (i >= p.n) return;
  int id = ids[i];
  bool valid = id >= 0 && uint(id) < p.n_rows;
  uint row_byte = p.w_offset + uint(valid ? id : 0) * p.row_bytes;
  uint out_base = (i * p.out_stride) >> 2;
  uint n_chunks = p.cols / CHUNK;
  for (uint c = gl_LocalInvocationID.x; c < n_chunks; c += WORKGROUP_SIZE) {
    Chunk k;
    load_chunk(row_byte, c, k);
    [[unroll]] for (uint g = 0u; g < CHUNK / 8u; ++g) {
      vec4 lo, hi;
      decode8(k, g, lo, hi);
      if (p.scale != 1.0) {  // skipped at 1 so that the copy stays exact even for denormals
        lo *= p.scale;
        hi *= p.scale;
      }
      if (!valid) {
        lo = vec4(0.0);
        hi = vec4(0.0);
      }
      uint o = out_base + (c * CHUNK + 8u * g) / 4u;
      out4[o] = lo;
      out4[o + 1u] = hi;
    }
  }
}
