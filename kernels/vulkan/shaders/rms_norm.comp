#version 450
#include "header.glsl"
// RMS normalization of rows (kernels::rms_norm): y[r][i] = x[r][i] * s_r * w[i] with
// s_r = 1 / sqrt(mean(x[r]^2) + eps). One workgroup per row (looping when there are more rows
// than workgroups). x and y may be the same buffer range (in place): each element is read and
// then written by the same invocation, after the row's sum is complete.
// Q8: also writes each row quantized for the int8 matvec (binding 3, q8_activations.glsl), each
// invocation four values at a time, so n % 32 == 0.
#if Q8
#define Q8_BINDING 3
#define Q8_WRITE
#define Q8_COOPERATIVE
#include "q8_activations.glsl"
#endif

layout(std430, set = 0, binding = 0) buffer X { float x[]; };
layout(std430, set = 0, binding = 1) readonly buffer W { float w[]; };
layout(std430, set = 0, binding = 2) buffer Y { float y[]; };

layout(push_constant) uniform Push {
  uint n_rows;
  uint n;  // row length
  float eps;
  uint x_off;  // first element of each operand in its binding
  uint w_off;
  uint y_off;
} pc;

shared float red[WORKGROUP_SIZE];

float normalized(float xv, float scale, float wv) {
  precise float v = xv * scale;
  return v * wv;
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
  for (uint row = gl_WorkGroupID.x; row < pc.n_rows; row += gl_NumWorkGroups.x) {
    const uint base = row * pc.n;
    const uint xb = pc.x_off + base, yb = pc.y_off + base;
    float sum = 0.0;
    for (uint i = tid; i < pc.n; i += WORKGROUP_SIZE) {
      const float v = x[xb + i];
      sum += v * v;
    }
    red[tid] = sum;
    barrier();
    [[unroll]] for (uint s = WORKGROUP_SIZE / 2; s > 0; s >>= 1) {
      if (tid < s) red[tid] += red[tid + s];
      barrier();
    }
    const float scale = 1.0 / sqrt(red[0] / float(pc.n) + pc.eps);
#if Q8
    const uint quads = pc.n / 4u;
    for (uint base = 0u; base < quads; base += WORKGROUP_SIZE) {  // the same trips in every invocation
      const uint quad = base + tid;
      const bool in_range = quad < quads;
      vec4 v = vec4(0.0);
      if (in_range) {
        [[unroll]] for (uint k = 0u; k < 4u; ++k) {
          const uint i = 4u * quad + k;
          v[k] = normalized(x[xb + i], scale, w[pc.w_off + i]);
          y[yb + i] = v[k];
        }
      }
      q8_store_quads(v, in_range, row * q8_row_words(pc.n), quad, pc.n);
    }
#else
    for (uint i = tid; i < pc.n; i += WORKGROUP_SIZE) y[yb + i] = normalized(x[xb + i], scale, w[pc.w_off + i]);
#endif
    // red[0] is read above by every invocation before the next row overwrites it.
    barrier();
  }
}
