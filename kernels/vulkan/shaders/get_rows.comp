#version 450
#include "header.glsl"
// Embedding lookup: out[i][c] = dequant(table row ids[i])[c] * scale, for i < n, c < cols.
// One workgroup per output row (x, folded into z past the dispatch limit); invocations take
// whole chunks of the row. Bindings: 0 table (weight rows), 1 ids (int32 [n]), 2 out (f32
// [n][out_stride], 16-byte aligned rows), 3 the i-quant grids (grid types only). A row id outside [0, n_rows) gives a row of zeros,
// or with keep_outside leaves its output row as it was (a table in parts, each part writing
// only the rows of the ids it holds).
// Preconditions (host): cols % CHUNK == 0, out_stride % 4 == 0, row starts ROW_ALIGN-aligned;
// float types (QK == 1) take rows of any length: when cols % 8 != 0 one value at a time.
#define WEIGHT_BINDING 0
#define GRID_BINDING 3
#include "weights.glsl"
#include "types/select_type.glsl"

layout(std430, set = 0, binding = 1) readonly buffer Ids { int ids[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { vec4 out4[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out1 { float out1[]; };

layout(push_constant) uniform Push {
  uint cols;        // values per row
  uint row_bytes;   // bytes per table row
  uint w_offset;    // byte offset of table row 0 in binding 0
  uint n;           // output rows
  uint out_stride;  // floats between output rows
  uint n_rows;      // table rows
  float scale;
  uint keep_outside;  // 1: an id outside [0, n_rows) writes nothing
} p;

// Writes 8 values at vec4 index o, scaled (the multiply is skipped at 1, so that the copy stays
// exact even for denormals).
void store8(uint o, vec4 lo, vec4 hi, bool valid) {
  if (p.scale != 1.0) {
    lo *= p.scale;
    hi *= p.scale;
  }
  out4[o] = valid ? lo : vec4(0.0);
  out4[o + 1u] = valid ? hi : vec4(0.0);
}

void main() {
  uint i = gl_WorkGroupID.x + gl_WorkGroupID.z * gl_NumWorkGroups.x;
  if (i >= p.n) return;
  int id = ids[i];
  bool valid = id >= 0 && uint(id) < p.n_rows;
  if (!valid && p.keep_outside != 0u) return;  // the whole workgroup: one row
  uint row_byte = p.w_offset + uint(valid ? id : 0) * p.row_bytes;
  uint out_base = (i * p.out_stride) >> 2;
  uint n_chunks = p.cols / CHUNK;
#if QK == 1
  if ((p.cols & 7u) != 0u) {  // float rows of any length: one value at a time
    for (uint c = gl_LocalInvocationID.x; c < p.cols; c += WORKGROUP_SIZE) {
      float v = load_value(row_byte, c);
      if (p.scale != 1.0) v *= p.scale;
      out1[i * p.out_stride + c] = valid ? v : 0.0;
    }
    return;
  }
#endif
  for (uint c = gl_LocalInvocationID.x; c < n_chunks; c += WORKGROUP_SIZE) {
    Chunk k;
    load_chunk(row_byte, c, k);
#if CHUNK >= 32
    for (uint part = 0u; part < CHUNK / 32u; ++part) {
      [[unroll]] for (uint g4 = 0u; g4 < 4u; ++g4) {
        vec4 lo, hi;
        decode8(k, part, g4, lo, hi);
        store8(out_base + (c * CHUNK + 32u * part + 8u * g4) / 4u, lo, hi, valid);
      }
    }
#else
    vec4 lo, hi;
    decode8(k, 0u, 0u, lo, hi);
    store8(out_base + c * (CHUNK / 4u), lo, hi, valid);
#endif
  }
}
