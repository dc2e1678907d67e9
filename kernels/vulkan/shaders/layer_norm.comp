#version 450
#include "header.glsl"
// LayerNorm of rows (kernels::layer_norm): y[r][i] = (x[r][i] - mean_r) * s_r * w[i] + b[i] with
// mean_r the row's mean and s_r = 1 / sqrt(mean((x[r] - mean_r)^2) + eps). One workgroup per row
// (looping when there are more rows than workgroups), two reductions (the mean, then the
// variance about it, as the CPU computes them). x and y may be the same range (in place): each
// element is read and then written by the same invocation, after both sums are complete.

layout(std430, set = 0, binding = 0) buffer X { float x[]; };
layout(std430, set = 0, binding = 1) readonly buffer W { float w[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 3) buffer Y { float y[]; };

layout(push_constant) uniform Push {
  uint n_rows;
  uint n;  // row length
  float eps;
  uint x_off;  // first element of each operand in its binding
  uint w_off;
  uint b_off;
  uint y_off;
} pc;

shared float red[WORKGROUP_SIZE];

// The sum of every invocation's `v` (a tree in shared memory); red[0] is read by all after it.
float workgroup_sum(float v, uint tid) {
  red[tid] = v;
  barrier();
  [[unroll]] for (uint s = WORKGROUP_SIZE / 2; s > 0; s >>= 1) {
    if (tid < s) red[tid] += red[tid + s];
    barrier();
  }
  const float total = red[0];
  barrier();  // every invocation has read red[0] before the next reduction writes it
  return total;
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
  for (uint row = gl_WorkGroupID.x; row < pc.n_rows; row += gl_NumWorkGroups.x) {
    const uint xb = pc.x_off + row * pc.n, yb = pc.y_off + row * pc.n;
    float sum = 0.0;
    for (uint i = tid; i < pc.n; i += WORKGROUP_SIZE) sum += x[xb + i];
    const float mean = workgroup_sum(sum, tid) / float(pc.n);
    float squares = 0.0;
    for (uint i = tid; i < pc.n; i += WORKGROUP_SIZE) {
      const float d = x[xb + i] - mean;
      squares += d * d;
    }
    const float scale = 1.0 / sqrt(workgroup_sum(squares, tid) / float(pc.n) + pc.eps);
    for (uint i = tid; i < pc.n; i += WORKGROUP_SIZE) {
      precise float v = (x[xb + i] - mean) * scale;
      precise float o = v * w[pc.w_off + i] + b[pc.b_off + i];
      y[yb + i] = o;
    }
  }
}
