#version 450
#include "header.glsl"
// In-place additions into y (n elements), one variant per define:
//   (none)  y[i] += x[i]                      kernels::add (residual connections)
//   BIAS    y[i] += x[i % n_cols]             a bias vector broadcast over rows (qwen2 q/k/v)
//   SCALED  y[i] += x[i] * scale              kernels::add_scaled
// Exact: one correctly rounded operation per element (precise keeps x * scale + y unfused).

layout(std430, set = 0, binding = 0) buffer Y { float y[]; };
layout(std430, set = 0, binding = 1) readonly buffer X { float x[]; };

layout(push_constant) uniform Push {
  uint n;
  uint n_cols;  // BIAS: the bias length (row length of y)
  float scale;  // SCALED
  uint y_off;   // first element of each operand in its binding
  uint x_off;
} pc;

void main() {
  const uint stride = gl_NumWorkGroups.x * WORKGROUP_SIZE;
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) {
#if defined(BIAS)
    y[pc.y_off + i] = y[pc.y_off + i] + x[pc.x_off + i % pc.n_cols];
#elif defined(SCALED)
    precise float p = x[pc.x_off + i] * pc.scale;
    precise float s = y[pc.y_off + i] + p;
    y[pc.y_off + i] = s;
#else
    y[pc.y_off + i] = y[pc.y_off + i] + x[pc.x_off + i];
#endif
  }
}
