#version 450
#include "header.glsl"
// dst[r][c] *= src[r * src_stride + c] for r < n_rows, c < n_cols, i over n = n_rows * n_cols
// elements: rows of dst times the same columns of wider rows of src (CpuOps::mul_columns,
// gemma4's gate times its layer's slice of the per-layer inputs; src_off points at the
// slice's first column). dst: [n_rows][n_cols] F32, in place; src: rows of src_stride F32.
// Exact: one correctly rounded multiply per element.

layout(std430, set = 0, binding = 0) buffer Dst { float dst[]; };
layout(std430, set = 0, binding = 1) readonly buffer Src { float src[]; };

layout(push_constant) uniform Push {
  uint n;
  uint n_cols;
  uint src_stride;  // floats between two rows of src (>= n_cols)
  uint dst_off;     // first element of each operand in its binding
  uint src_off;
} pc;

void main() {
  const uint stride = gl_NumWorkGroups.x * WORKGROUP_SIZE;
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) {
    const uint r = i / pc.n_cols, c = i % pc.n_cols;
    dst[pc.dst_off + i] = dst[pc.dst_off + i] * src[pc.src_off + r * pc.src_stride + c];
  }
}
