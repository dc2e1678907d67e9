#version 450
#include "header.glsl"
// Mixture-of-experts routing, per token (CpuOps::moe_route): p = softmax(logits[t]) over
// n_expert, the k largest p in descending order (ties: the lower expert index first, as the
// CPU's partial_sort comparator), ids[t][j] = expert, weights[t][j] = p, or p / (sum of the k
// selected p, added in selection order) when renormalize is set (Mixtral; qwen2moe keeps p).
// One invocation per token: n_expert and k are small, and a serial loop keeps the selection
// order and the float sums exactly the CPU's.
// Precondition: 1 <= k <= kMaxK, k <= n_expert.

layout(std430, set = 0, binding = 0) readonly buffer Logits { float logits[]; };  // [n_tokens][n_expert]
layout(std430, set = 0, binding = 1) writeonly buffer Ids { int ids[]; };         // [n_tokens][k]
layout(std430, set = 0, binding = 2) writeonly buffer Weights { float weights[]; };  // [n_tokens][k]

layout(push_constant) uniform Push {
  uint n_tokens;
  uint n_expert;
  uint k;
  uint renormalize;
  uint logits_off;  // first element of each operand in its binding
  uint ids_off;
  uint weights_off;
} pc;

const uint kMaxK = 32;

void main() {
  const uint stride = gl_NumWorkGroups.x * WORKGROUP_SIZE;
  for (uint t = gl_GlobalInvocationID.x; t < pc.n_tokens; t += stride) {
    const uint base = pc.logits_off + t * pc.n_expert;
    float mx = logits[base];
    for (uint e = 1; e < pc.n_expert; ++e) {
      const float v = logits[base + e];
      mx = v > mx ? v : mx;
    }
    float sum = 0.0;
    for (uint e = 0; e < pc.n_expert; ++e) sum += exp(logits[base + e] - mx);
    const float inv = 1.0 / sum;

    // Insertion into a descending list; an equal p never moves ahead of an earlier expert.
    float best_p[kMaxK];
    uint best_e[kMaxK];
    uint count = 0;
    for (uint e = 0; e < pc.n_expert; ++e) {
      const float p = exp(logits[base + e] - mx) * inv;
      if (count == pc.k && !(p > best_p[pc.k - 1u])) continue;
      uint j = count < pc.k ? count : pc.k - 1u;
      while (j > 0u && best_p[j - 1u] < p) {
        best_p[j] = best_p[j - 1u];
        best_e[j] = best_e[j - 1u];
        --j;
      }
      best_p[j] = p;
      best_e[j] = e;
      if (count < pc.k) ++count;
    }

    float selected = 0.0;
    for (uint j = 0; j < pc.k; ++j) selected += best_p[j];
    for (uint j = 0; j < pc.k; ++j) {
      ids[pc.ids_off + t * pc.k + j] = int(best_e[j]);
      weights[pc.weights_off + t * pc.k + j] = pc.renormalize != 0u ? best_p[j] / selected : best_p[j];
    }
  }
}
