#version 450
#include "header.glsl"
// y = W x for many tokens (the prefill path): y[t][y_offset + r] = sum_c W[r][c] x[t][c].
// A workgroup computes a BM-row x BN-token tile; for each step of 32 columns it decodes the
// BM x 32 weight tile and copies the BN x 32 x tile into shared memory, then each invocation
// accumulates a TM x TN micro-tile from them. Rows past `rows` and tokens past `n` are
// computed on clamped (valid) data and not written.
// Workgroups: x = row tile (folded into z past the dispatch limit), y = token tile.
// Bindings: 0 W, 1 x (f32 rows of x_stride floats), 2 y (f32), 3 the i-quant grids (grid types
// only: types/iq_grid_values.glsl). Same push constants as
// matvec.comp (the expert fields are unused).
// Preconditions (host): cols % 32 == 0, x_stride % 4 == 0, row starts ROW_ALIGN-aligned,
// WORKGROUP_SIZE == (BM / TM) * (BN / TN), BM % TM == 0, BN % TN == 0.
#define WEIGHT_BINDING 0
#define GRID_BINDING 3
#include "weights.glsl"
#include "types/select_type.glsl"

layout(constant_id = 1) const uint BM = 64;  // rows per workgroup tile
layout(constant_id = 2) const uint BN = 32;  // tokens per workgroup tile
layout(constant_id = 3) const uint TM = 4;   // rows per invocation
layout(constant_id = 4) const uint TN = 4;   // tokens per invocation

layout(std430, set = 0, binding = 1) readonly buffer X { vec4 x4[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Y { float y[]; };

#include "matmul_push.glsl"

const uint BK = 32u;
const uint STRIDE = BK / 4u + 1u;  // vec4s per tile row, padded against bank conflicts
shared vec4 w_tile[BM * STRIDE];
shared vec4 x_tile[BN * STRIDE];

void main() {
  uint lane = gl_LocalInvocationID.x;
  uint row0 = (gl_WorkGroupID.x + gl_WorkGroupID.z * gl_NumWorkGroups.x) * BM;
  if (row0 >= p.rows) return;  // whole workgroup
  uint t0 = p.t_base + gl_WorkGroupID.y * BN;
  uint tm = lane % (BM / TM), tn = lane / (BM / TM);

  float acc[TM * TN];
  [[unroll]] for (uint i = 0u; i < TM * TN; ++i) acc[i] = 0.0;

  for (uint k0 = 0u; k0 < p.cols; k0 += BK) {
    for (uint m = lane; m < BM; m += WORKGROUP_SIZE) {
      uint row_byte = p.w_offset + min(row0 + m, p.rows - 1u) * p.row_bytes;
      vec4 v[8];
      dequant32_row(row_byte, k0 / BK, v);
      [[unroll]] for (uint i = 0u; i < 8u; ++i) w_tile[m * STRIDE + i] = v[i];
    }
    for (uint e = lane; e < BN * (BK / 4u); e += WORKGROUP_SIZE) {
      uint t = e / (BK / 4u), q = e % (BK / 4u);
      x_tile[t * STRIDE + q] = x4[((min(t0 + t, p.n - 1u) * p.x_stride + k0) >> 2) + q];
    }
    barrier();
    [[unroll]] for (uint q = 0u; q < BK / 4u; ++q) {
      vec4 wv[TM], xv[TN];
      [[unroll]] for (uint i = 0u; i < TM; ++i) wv[i] = w_tile[(tm * TM + i) * STRIDE + q];
      [[unroll]] for (uint j = 0u; j < TN; ++j) xv[j] = x_tile[(tn * TN + j) * STRIDE + q];
      [[unroll]] for (uint i = 0u; i < TM; ++i) {
        [[unroll]] for (uint j = 0u; j < TN; ++j) acc[i * TN + j] += dot(wv[i], xv[j]);
      }
    }
    barrier();
  }

  [[unroll]] for (uint i = 0u; i < TM; ++i) {
    uint r = row0 + tm * TM + i;
    [[unroll]] for (uint j = 0u; j < TN; ++j) {
      uint t = t0 + tn * TN + j;
      if (r < p.rows && t < p.n) y[t * p.y_stride + p.y_offset + r] = acc[i * TN + j];
    }
  }
}
