#version 450
#include "header.glsl"
// The Gated DeltaNet recurrence's inputs made ready, in place (kernels::delta_net_prepare), for
// n rows: in each conv row ([channels]: q heads, then k heads, then v heads, each d values) the
// 2 * n_k_heads q and k heads l2-normalized, x / max(|x|, eps), q also scaled by 1/sqrt(d);
// per value head h < n_v_heads, alpha[t][h] = softplus(alpha[t][h] + dt[h]) * a[h] (the decay
// g, log space) and beta[t][h] = sigmoid(beta[t][h]). One workgroup per row (looping when there
// are more rows than workgroups).

layout(std430, set = 0, binding = 0) buffer Conv { float conv[]; };
layout(std430, set = 0, binding = 1) buffer Alpha { float alpha[]; };
layout(std430, set = 0, binding = 2) buffer Beta { float beta[]; };
layout(std430, set = 0, binding = 3) readonly buffer Dt { float dt[]; };
layout(std430, set = 0, binding = 4) readonly buffer A { float a[]; };

layout(push_constant) uniform Push {
  uint n;
  uint channels;
  uint n_k_heads;
  uint d;
  uint n_v_heads;
  float eps;
  uint conv_off;  // first element of each operand in its binding
  uint alpha_off;
  uint beta_off;
  uint dt_off;
  uint a_off;
} pc;

shared float red[WORKGROUP_SIZE];

// |x| of d values at conv[base], every invocation getting the sum.
float norm_of(uint base) {
  const uint tid = gl_LocalInvocationID.x;
  float sum = 0.0;
  for (uint i = tid; i < pc.d; i += WORKGROUP_SIZE) sum += conv[base + i] * conv[base + i];
  red[tid] = sum;
  barrier();
  [[unroll]] for (uint s = WORKGROUP_SIZE / 2; s > 0; s >>= 1) {
    if (tid < s) red[tid] += red[tid + s];
    barrier();
  }
  const float total = red[0];
  barrier();  // red is reused by the next head
  return sqrt(total);
}

float softplus(float x) { return x > 20.0 ? x : log(1.0 + exp(x)); }

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const float q_scale = 1.0 / sqrt(float(pc.d));
  for (uint t = gl_WorkGroupID.x; t < pc.n; t += gl_NumWorkGroups.x) {
    const uint row = pc.conv_off + t * pc.channels;
    for (uint head = 0u; head < 2u * pc.n_k_heads; ++head) {  // the q heads, then the k heads
      const uint base = row + head * pc.d;
      const float s = (head < pc.n_k_heads ? q_scale : 1.0) / max(norm_of(base), pc.eps);
      for (uint i = tid; i < pc.d; i += WORKGROUP_SIZE) conv[base + i] *= s;
    }
    for (uint h = tid; h < pc.n_v_heads; h += WORKGROUP_SIZE) {
      const uint i = t * pc.n_v_heads + h;
      alpha[pc.alpha_off + i] = softplus(alpha[pc.alpha_off + i] + dt[pc.dt_off + h]) * a[pc.a_off + h];
      beta[pc.beta_off + i] = 1.0 / (1.0 + exp(-beta[pc.beta_off + i]));
    }
  }
}
