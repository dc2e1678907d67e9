#version 450
#include "header.glsl"
// y = W x for up to NT = 8 tokens per workgroup: y[t][y_offset + r] = sum_c W[r][c] x[t][c].
// GPUs use it for decoding (few tokens); CPU drivers for every batch (ROWWISE below).
// Two layouts of the work (the host picks the variant):
//  default   a workgroup computes ROWS rows for NT tokens; its invocations split the row into
//            chunks (types/common.glsl), each decoding its chunk of the ROWS rows once and
//            dotting it with the NT tokens' x; one shared-memory reduction (a single barrier)
//            sums the invocations. Adjacent invocations read adjacent weights (GPUs).
//  ROWWISE   (CPU drivers such as lavapipe: a subgroup is one SIMD register) every invocation
//            owns ROWS whole rows, and all walk the chunks together; each group of 8
//            invocations reads a 32-value run of x once, invocation i its i-th vec4, and
//            passes it around with subgroupBroadcast (an extract and a splat), so a per-
//            invocation buffer read (a scalar loop over the lanes there) brings 8x fewer x
//            values per weight. No shared memory, no barrier. Needs subgroups of >= 8
//            invocations with the workgroup a whole number of them, and cols % 32 == 0.
// Workgroups: x = row group (folded into z past the dispatch limit), y = token group.
// MUL_MAT_ID (experts): one (token, k) pair per workgroup y (NT = 1): the matrix is
// ids[pair], x row is the pair's (x_per_pair) or its token's (pair / k_used), y row the pair's.
// Bindings: 0 W, 1 x (f32 rows of x_stride floats), 2 y (f32), 3 ids (int32, MUL_MAT_ID), then
// the i-quant grids (read by the grid types only: types/iq_grid_values.glsl).
// Preconditions (host): cols % CHUNK == 0, x_stride % 4 == 0, row starts ROW_ALIGN-aligned;
// default layout: WORKGROUP_SIZE * ROWS * NT floats of shared memory. Float types (QK == 1)
// also take rows of any length in the default layout: when cols % 8 != 0 they are read one
// value at a time (load_value), x as floats, with any x_stride and element-aligned rows.
#if ROWWISE
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#endif
#define WEIGHT_BINDING 0
#ifdef MUL_MAT_ID
#define GRID_BINDING 4
#else
#define GRID_BINDING 3
#endif
#include "weights.glsl"
#include "types/select_type.glsl"

// The 32-value parts of a chunk: a real loop for large chunks (bounded code size), unrolled
// for small ones.
#if CHUNK >= 128
#define PART_LOOP [[dont_unroll]]
#else
#define PART_LOOP [[unroll]]
#endif

layout(constant_id = 1) const uint ROWS = 4;  // rows per workgroup (ROWWISE: per invocation)
layout(constant_id = 2) const uint NT = 1;    // tokens per workgroup

layout(std430, set = 0, binding = 1) readonly buffer X { vec4 x4[]; };
layout(std430, set = 0, binding = 1) readonly buffer X1 { float x1[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Y { float y[]; };
#ifdef MUL_MAT_ID
layout(std430, set = 0, binding = 3) readonly buffer Ids { int ids[]; };
#endif

#include "matmul_push.glsl"

// acc + dot(wl, xl) + dot(wh, xh) as eight fused multiply-adds (half the operations of two dot
// products and their sum).
float dot8(vec4 wl, vec4 wh, vec4 xl, vec4 xh, float acc) {
  acc = fma(wl.x, xl.x, acc);
  acc = fma(wl.y, xl.y, acc);
  acc = fma(wl.z, xl.z, acc);
  acc = fma(wl.w, xl.w, acc);
  acc = fma(wh.x, xh.x, acc);
  acc = fma(wh.y, xh.y, acc);
  acc = fma(wh.z, xh.z, acc);
  return fma(wh.w, xh.w, acc);
}

#if !ROWWISE
shared float partial[WORKGROUP_SIZE * ROWS * NT];
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
  uint x_row[NT];   // float index of each token's x row
  uint x_base[NT];  // the same in vec4s (x_stride % 4 == 0)
  bool valid = true;
#ifdef MUL_MAT_ID
  int expert = ids[t0];
  valid = expert >= 0 && uint(expert) < p.n_mats;
  w_base += uint(valid ? expert : 0) * p.matrix_bytes;
  x_row[0] = (p.x_per_pair != 0u ? t0 : t0 / p.k_used) * p.x_stride;
#else
  [[unroll]] for (uint t = 0u; t < NT; ++t) x_row[t] = min(t0 + t, p.n - 1u) * p.x_stride;
#endif
  [[unroll]] for (uint t = 0u; t < NT; ++t) x_base[t] = x_row[t] >> 2;
  // This invocation's rows (ROWWISE) or the workgroup's (default): row0 + r.
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
#if CHUNK >= 32
  for (uint c = 0u; c < n_chunks; ++c) {  // the same c in every invocation
    Chunk k[ROWS];
    [[unroll]] for (uint r = 0u; r < ROWS; ++r) load_chunk(row_byte[r], c, k[r]);
    PART_LOOP for (uint part = 0u; part < CHUNK / 32u; ++part) {
      vec4 xm[NT];  // this invocation's vec4 of the part's x, per token
      [[unroll]] for (uint t = 0u; t < NT; ++t) xm[t] = x4[x_base[t] + c * (CHUNK / 4u) + 8u * part + sub];
      [[unroll]] for (uint g4 = 0u; g4 < 4u; ++g4) {
        vec4 xlo[NT], xhi[NT];
        [[unroll]] for (uint t = 0u; t < NT; ++t) {
          xlo[t] = subgroupBroadcast(xm[t], 2u * g4);
          xhi[t] = subgroupBroadcast(xm[t], 2u * g4 + 1u);
        }
        [[unroll]] for (uint r = 0u; r < ROWS; ++r) {
          vec4 wlo, whi;
          decode8(k[r], part, g4, wlo, whi);
          [[unroll]] for (uint t = 0u; t < NT; ++t) acc[r * NT + t] = dot8(wlo, whi, xlo[t], xhi[t], acc[r * NT + t]);
        }
      }
    }
  }
#else
  // 8-value chunks (float types): four per 32-value run of x.
  for (uint c4 = 0u; c4 < n_chunks; c4 += 4u) {
    vec4 xm[NT];
    [[unroll]] for (uint t = 0u; t < NT; ++t) xm[t] = x4[x_base[t] + c4 * 2u + sub];
    [[unroll]] for (uint gg = 0u; gg < 4u; ++gg) {
      vec4 xlo[NT], xhi[NT];
      [[unroll]] for (uint t = 0u; t < NT; ++t) {
        xlo[t] = subgroupBroadcast(xm[t], 2u * gg);
        xhi[t] = subgroupBroadcast(xm[t], 2u * gg + 1u);
      }
      [[unroll]] for (uint r = 0u; r < ROWS; ++r) {
        Chunk k;
        load_chunk(row_byte[r], c4 + gg, k);
        vec4 wlo, whi;
        decode8(k, 0u, 0u, wlo, whi);
        [[unroll]] for (uint t = 0u; t < NT; ++t) acc[r * NT + t] = dot8(wlo, whi, xlo[t], xhi[t], acc[r * NT + t]);
      }
    }
  }
#endif
  [[unroll]] for (uint i = 0u; i < ROWS * NT; ++i) {
    uint r = i / NT, t = i % NT;
    if (row0 + r < p.rows && t0 + t < p.n) y[(t0 + t) * p.y_stride + p.y_offset + row0 + r] = valid ? acc[i] : 0.0;
  }
#else
#if QK == 1
  if ((p.cols & 7u) != 0u) {  // float rows of any length: one value at a time
    for (uint c = lane; c < p.cols; c += WORKGROUP_SIZE) {
      float xv[NT];
      [[unroll]] for (uint t = 0u; t < NT; ++t) xv[t] = x1[x_row[t] + c];
      [[unroll]] for (uint r = 0u; r < ROWS; ++r) {
        float wv = load_value(row_byte[r], c);
        [[unroll]] for (uint t = 0u; t < NT; ++t) acc[r * NT + t] = fma(wv, xv[t], acc[r * NT + t]);
      }
    }
    n_chunks = 0u;
  }
#endif
  for (uint c = lane; c < n_chunks; c += WORKGROUP_SIZE) {
    Chunk k[ROWS];
    [[unroll]] for (uint r = 0u; r < ROWS; ++r) load_chunk(row_byte[r], c, k[r]);
#if CHUNK >= 32
    PART_LOOP for (uint part = 0u; part < CHUNK / 32u; ++part) {
      uint xc = c * (CHUNK / 4u) + 8u * part;
      [[unroll]] for (uint g4 = 0u; g4 < 4u; ++g4) {
#else
    {
      uint part = 0u, xc = c * 2u;
      {
        uint g4 = 0u;
#endif
        vec4 xlo[NT], xhi[NT];
        [[unroll]] for (uint t = 0u; t < NT; ++t) {
          xlo[t] = x4[x_base[t] + xc + 2u * g4];
          xhi[t] = x4[x_base[t] + xc + 2u * g4 + 1u];
        }
        [[unroll]] for (uint r = 0u; r < ROWS; ++r) {
          vec4 wlo, whi;
          decode8(k[r], part, g4, wlo, whi);
          [[unroll]] for (uint t = 0u; t < NT; ++t) acc[r * NT + t] = dot8(wlo, whi, xlo[t], xhi[t], acc[r * NT + t]);
        }
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
