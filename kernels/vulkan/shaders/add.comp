#version 450
#include "header.glsl"
// In-place additions into y (n elements), one variant per define:
//   (none)  y[i] += x[i]                      kernels::add (residual connections)
//   BIAS    y[i] += x[i % n_cols]             a bias vector broadcast over rows (qwen2 q/k/v)
//   SCALED  y[i] += x[i] * scale              kernels::add_scaled
//   EXPERT_BIAS  y[r][c] += x[ids[r]][c]      row r of a route takes its expert's bias row
//                                             (gpt-oss; ids: binding 2, the routes' expert ids)
// Exact: one correctly rounded operation per element (precise keeps x * scale + y unfused).

layout(std430, set = 0, binding = 0) buffer Y { float y[]; };
layout(std430, set = 0, binding = 1) readonly buffer X { float x[]; };
#if defined(EXPERT_BIAS)
layout(std430, set = 0, binding = 2) readonly buffer Ids { int ids[]; };
#endif

layout(push_constant) uniform Push {
  uint n;
  uint n_cols;  // BIAS: the bias length (row length of y)
  float scale;  // SCALED
  uint y_off;   // first element of each operand in its binding
  uint x_off;
  uint ids_off;  // EXPERT_BIAS
} pc;

void main() {
  const uint stride = gl_NumWorkGroups.x * WORKGROUP_SIZE;
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) {
#if defined(BIAS)
    y[pc.y_off + i] = y[pc.y_off + i] + x[pc.x_off + i % pc.n_cols];
#elif defined(EXPERT_BIAS)
    const uint r = i / pc.n_cols, c = i % pc.n_cols;
    y[pc.y_off + i] = y[pc.y_off + i] + x[pc.x_off + uint(ids[pc.ids_off + r]) * pc.n_cols + c];
#elif defined(SCALED)
    precise float p = x[pc.x_off + i] * pc.scale;
    precise float s = y[pc.y_off + i] + p;
    y[pc.y_off + i] = s;
#else
    y[pc.y_off + i] = y[pc.y_off + i] + x[pc.x_off + i];
#endif
  }
}
