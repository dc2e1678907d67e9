#version 450
#include "header.glsl"
// A Gated DeltaNet layer's short causal convolution over one span's rows, then silu
// (kernels::causal_conv_silu): per channel c < channels, for t < n,
//   x[t][c] = silu(sum_{j<K} w[c][j] * in[t - (K-1) + j][c]),
// the inputs before row 0 coming from state ([K-1][channels], oldest first; zeros when fresh),
// which ends holding the span's last K - 1 inputs. One invocation per channel walks the rows in
// order, in place (x: [n][channels]; w: [channels][K]).
// Precondition: 2 <= K <= MAX_TAPS.

#define MAX_TAPS 8  // kGpuMaxConvTaps (engine/backend/gpu_delta_net_limits.h)

layout(std430, set = 0, binding = 0) buffer X { float x[]; };
layout(std430, set = 0, binding = 1) readonly buffer W { float w[]; };
layout(std430, set = 0, binding = 2) buffer State { float state[]; };

layout(push_constant) uniform Push {
  uint n;
  uint channels;
  uint taps;   // K
  uint fresh;  // 1: the span starts at position 0 (a zero state)
  uint x_off;  // first element of each operand in its binding
  uint w_off;
  uint s_off;
} pc;

void main() {
  const uint stride = gl_NumWorkGroups.x * WORKGROUP_SIZE;
  const uint window = pc.taps - 1u;
  for (uint c = gl_GlobalInvocationID.x; c < pc.channels; c += stride) {
    float past[MAX_TAPS - 1];  // the last K - 1 inputs, oldest first
    for (uint j = 0u; j < window; ++j) past[j] = pc.fresh != 0u ? 0.0 : state[pc.s_off + j * pc.channels + c];
    const uint wc = pc.w_off + c * pc.taps;
    for (uint t = 0u; t < pc.n; ++t) {
      const uint i = pc.x_off + t * pc.channels + c;
      const float in_value = x[i];
      float sum = 0.0;
      for (uint j = 0u; j < window; ++j) sum += w[wc + j] * past[j];
      sum += w[wc + window] * in_value;
      for (uint j = 0u; j + 1u < window; ++j) past[j] = past[j + 1u];
      past[window - 1u] = in_value;
      x[i] = sum / (1.0 + exp(-sum));
    }
    for (uint j = 0u; j < window; ++j) state[pc.s_off + j * pc.channels + c] = past[j];
  }
}
