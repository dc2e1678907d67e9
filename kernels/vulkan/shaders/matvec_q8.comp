#version 450
#include "header.glsl"
// y = W x with int8 dot products, for every quantized weight type, on x quantized by
// quantize_q8.comp (or the _q8 variants of the ops that produce it; q8_activations.glsl):
//   y[t][r] = sum over the row's 32-value parts of q8_part_dot (types/*.glsl): integer sums of
//             weight integers times the part's int8 x, scaled by the weight scales (and mins)
//             and the part's x scale.
// For the 32-block types (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4) these are the CPU backend's
// integer block sums (kernels/cpu/matmul.h); the K-quant and ternary types use the same
// 32-value activation blocks (the CPU's Q8_K has 256-value ones).
// DOT_PRODUCT, STORAGE16: see q8_dot.glsl and q8_activations.glsl; both variants give
// bit-identical results.
// Layouts and workgroups as matvec.comp (the host picks the variant):
//  default   a workgroup computes ROWS rows for NT tokens; each invocation takes whole chunks
//            (two 16-byte reads of x per 32 values and token), and one shared-memory reduction
//            sums the invocations.
//  ROWWISE   (CPU drivers) every invocation owns ROWS whole rows and all walk the chunks
//            together; invocation i of each group of 8 reads the part's i-th word of x and
//            passes it around with subgroupBroadcast.
// MUL_MAT_ID (experts): as matvec.comp.
// Bindings: 0 W, 1 x quantized (rows of x_stride words), 2 y (f32), 3 ids (int32, MUL_MAT_ID),
// then the i-quant grids (read by the grid types only: types/iq_grid_values.glsl).
// Preconditions (host): cols % CHUNK == 0, x_stride == q8_row_words(cols), row starts
// ROW_ALIGN-aligned; default layout: WORKGROUP_SIZE * ROWS * NT floats of shared memory;
// ROWWISE: subgroups of >= 8 invocations with the workgroup a whole number of them.
#if ROWWISE
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#endif
#if DOT_PRODUCT
#extension GL_EXT_spirv_intrinsics : require
#endif
#define WEIGHT_BINDING 0
#ifdef MUL_MAT_ID
#define GRID_BINDING 4
#else
#define GRID_BINDING 3
#endif
#include "weights.glsl"
#include "q8_dot.glsl"
#include "types/select_type.glsl"
#define Q8_BINDING 1
#include "q8_activations.glsl"
#include "matmul_push.glsl"

#if QK == 1
#error "matvec_q8.comp takes the quantized weight types only"
#endif
const uint PARTS = CHUNK / 32u;  // 32-value parts per chunk

// The 32-value parts of a chunk: a real loop for large chunks (bounded code size), unrolled
// for small ones.
#if CHUNK >= 128
#define PART_LOOP [[dont_unroll]]
#else
#define PART_LOOP [[unroll]]
#endif

layout(constant_id = 1) const uint ROWS = 4;  // rows per workgroup (ROWWISE: per invocation)
layout(constant_id = 2) const uint NT = 1;    // tokens per workgroup

layout(std430, set = 0, binding = 2) writeonly buffer Y { float y[]; };
#ifdef MUL_MAT_ID
layout(std430, set = 0, binding = 3) readonly buffer Ids { int ids[]; };
#endif

#if !ROWWISE
shared float partial[WORKGROUP_SIZE * ROWS * NT];

// Block c (values 32c..) of the x row starting at word x_row (a multiple of 4).
XBlock load_block(uint x_row, uint c) {
  XBlock xb;
  uvec4 lo = q8_quads[x_row / 4u + 2u * c], hi = q8_quads[x_row / 4u + 2u * c + 1u];
  xb.q[0] = lo.x; xb.q[1] = lo.y; xb.q[2] = lo.z; xb.q[3] = lo.w;
  xb.q[4] = hi.x; xb.q[5] = hi.y; xb.q[6] = hi.z; xb.q[7] = hi.w;
  q8_read_meta(x_row + p.cols / 4u + c, xb.d, xb.sum);
  return xb;
}
#else
// Block c (values 32c..) of the x row starting at word x_row: invocation `sub` of each group of
// 8 reads word `sub` of the block; the words go around the group.
XBlock load_block_shared(uint x_row, uint c, uint sub) {
  uint mine = q8_words[x_row + 8u * c + sub];
  XBlock xb;
  [[unroll]] for (uint i = 0u; i < 8u; ++i) xb.q[i] = subgroupBroadcast(mine, i);
  q8_read_meta(x_row + p.cols / 4u + c, xb.d, xb.sum);
  return xb;
}
#endif

void main() {
  uint lane = gl_LocalInvocationID.x;
#if ROWWISE
  uint rows_per_group = ROWS * WORKGROUP_SIZE;
#else
  uint rows_per_group = ROWS;
#endif
  uint group_row0 = (gl_WorkGroupID.x + gl_WorkGroupID.z * gl_NumWorkGroups.x) * rows_per_group;
  if (group_row0 >= p.rows) return;  // whole workgroup
  uint t0 = p.t_base + gl_WorkGroupID.y * NT;
  uint w_base = p.w_offset;
  uint x_row[NT];  // first word of each token's x row
  bool valid = true;
#ifdef MUL_MAT_ID
  int expert = ids[t0];
  valid = expert >= 0 && uint(expert) < p.n_mats;
  w_base += uint(valid ? expert : 0) * p.matrix_bytes;
  x_row[0] = (p.x_per_pair != 0u ? t0 : t0 / p.k_used) * p.x_stride;
#else
  [[unroll]] for (uint t = 0u; t < NT; ++t) x_row[t] = min(t0 + t, p.n - 1u) * p.x_stride;
#endif
#if ROWWISE
  uint row0 = group_row0 + lane * ROWS;
#else
  uint row0 = group_row0;
#endif
  uint row_byte[ROWS];
  [[unroll]] for (uint r = 0u; r < ROWS; ++r) row_byte[r] = w_base + min(row0 + r, p.rows - 1u) * p.row_bytes;

  float acc[ROWS * NT];
  [[unroll]] for (uint i = 0u; i < ROWS * NT; ++i) acc[i] = 0.0;
  uint n_chunks = p.cols / CHUNK;

#if ROWWISE
  uint sub = gl_SubgroupInvocationID & 7u;
  for (uint c = 0u; c < n_chunks; ++c) {  // the same c in every invocation
    Chunk k[ROWS];
    [[unroll]] for (uint r = 0u; r < ROWS; ++r) load_chunk(row_byte[r], c, k[r]);
    PART_LOOP for (uint part = 0u; part < PARTS; ++part) {
      XBlock xb[NT];
      [[unroll]] for (uint t = 0u; t < NT; ++t) xb[t] = load_block_shared(x_row[t], c * PARTS + part, sub);
      [[unroll]] for (uint r = 0u; r < ROWS; ++r) {
        [[unroll]] for (uint t = 0u; t < NT; ++t) acc[r * NT + t] += q8_part_dot(k[r], part, xb[t]);
      }
    }
  }
  [[unroll]] for (uint i = 0u; i < ROWS * NT; ++i) {
    uint r = i / NT, t = i % NT;
    if (row0 + r < p.rows && t0 + t < p.n) y[(t0 + t) * p.y_stride + p.y_offset + row0 + r] = valid ? acc[i] : 0.0;
  }
#else
  for (uint c = lane; c < n_chunks; c += WORKGROUP_SIZE) {
    Chunk k[ROWS];
    [[unroll]] for (uint r = 0u; r < ROWS; ++r) load_chunk(row_byte[r], c, k[r]);
    PART_LOOP for (uint part = 0u; part < PARTS; ++part) {
      XBlock xb[NT];
      [[unroll]] for (uint t = 0u; t < NT; ++t) xb[t] = load_block(x_row[t], c * PARTS + part);
      [[unroll]] for (uint r = 0u; r < ROWS; ++r) {
        [[unroll]] for (uint t = 0u; t < NT; ++t) acc[r * NT + t] += q8_part_dot(k[r], part, xb[t]);
      }
    }
  }
  [[unroll]] for (uint i = 0u; i < ROWS * NT; ++i) partial[i * WORKGROUP_SIZE + lane] = acc[i];
  barrier();
  for (uint i = lane; i < ROWS * NT; i += WORKGROUP_SIZE) {
    uint base = i * WORKGROUP_SIZE;
    vec4 s = vec4(0.0);
    for (uint j = 0u; j < WORKGROUP_SIZE; j += 4u)
      s += vec4(partial[base + j], partial[base + j + 1u], partial[base + j + 2u], partial[base + j + 3u]);
    uint r = i / NT, t = i % NT;
    if (row0 + r < p.rows && t0 + t < p.n) {
      y[(t0 + t) * p.y_stride + p.y_offset + row0 + r] = valid ? (s.x + s.y) + (s.z + s.w) : 0.0;
    }
  }
#endif
}
