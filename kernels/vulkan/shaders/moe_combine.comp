#version 450
#include "header.glsl"
// Mixture-of-experts output of a batch (CpuOps::moe_combine):
//   out[t][:] = sum_j weights[t][j] * y[t * k + j][:]
// where y holds the experts' down-projection outputs, one row per (token, choice) pair. The
// terms are added in ascending expert id, the CPU's order (it runs expert 0, 1, ... and
// accumulates into a zeroed row), each as one rounded product and one rounded sum (precise),
// so without the shared expert the result is bit-identical to the CPU's.
// With has_shexp (qwen2moe): out[t][:] += sigmoid(dot(gate_inp_shexp, h[t])) * shexp_out[t][:].
// One workgroup per token (looping when there are more tokens than workgroups).
// Precondition: 1 <= k <= kMaxK.

layout(std430, set = 0, binding = 0) readonly buffer Y { float y[]; };              // [n_tokens * k][n_embd]
layout(std430, set = 0, binding = 1) readonly buffer Ids { int ids[]; };            // [n_tokens][k]
layout(std430, set = 0, binding = 2) readonly buffer Weights { float weights[]; };  // [n_tokens][k]
layout(std430, set = 0, binding = 3) writeonly buffer Out { float outv[]; };        // [n_tokens][n_embd]
layout(std430, set = 0, binding = 4) readonly buffer Shexp { float shexp_out[]; };  // [n_tokens][n_embd]
layout(std430, set = 0, binding = 5) readonly buffer ShexpGate { float gate_inp[]; };  // [n_embd]
layout(std430, set = 0, binding = 6) readonly buffer H { float hv[]; };             // [n_tokens][n_embd]

layout(push_constant) uniform Push {
  uint n_tokens;
  uint n_embd;
  uint k;
  uint has_shexp;
  uint y_off;  // first element of each operand in its binding
  uint ids_off;
  uint weights_off;
  uint out_off;
  uint shexp_off;
  uint gate_off;
  uint h_off;
} pc;

const uint kMaxK = 32;
shared uint order_s[kMaxK];
shared float red[WORKGROUP_SIZE];

void main() {
  const uint tid = gl_LocalInvocationID.x;
  for (uint t = gl_WorkGroupID.x; t < pc.n_tokens; t += gl_NumWorkGroups.x) {
    if (tid == 0u) {
      // Choices sorted by (expert id, j): selection sort over k <= kMaxK entries.
      uint taken = 0u;  // bit j: choice j placed
      for (uint n = 0; n < pc.k; ++n) {
        uint best = 0u;
        int best_id = 0;
        bool found = false;
        for (uint j = 0; j < pc.k; ++j) {
          if ((taken & (1u << j)) != 0u) continue;
          const int id = ids[pc.ids_off + t * pc.k + j];
          if (!found || id < best_id) {
            best = j;
            best_id = id;
            found = true;
          }
        }
        taken |= 1u << best;
        order_s[n] = best;
      }
    }
    float gate = 0.0;
    if (pc.has_shexp != 0u) {
      float partial = 0.0;
      for (uint i = tid; i < pc.n_embd; i += WORKGROUP_SIZE) partial += gate_inp[pc.gate_off + i] * hv[pc.h_off + t * pc.n_embd + i];
      red[tid] = partial;
      barrier();
      [[unroll]] for (uint s = WORKGROUP_SIZE / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] += red[tid + s];
        barrier();
      }
      gate = 1.0 / (1.0 + exp(-red[0]));
    }
    barrier();
    for (uint i = tid; i < pc.n_embd; i += WORKGROUP_SIZE) {
      precise float acc = 0.0;
      for (uint n = 0; n < pc.k; ++n) {
        const uint j = order_s[n];
        acc = acc + y[pc.y_off + (t * pc.k + j) * pc.n_embd + i] * weights[pc.weights_off + t * pc.k + j];
      }
      if (pc.has_shexp != 0u) acc = acc + shexp_out[pc.shexp_off + t * pc.n_embd + i] * gate;
      outv[pc.out_off + t * pc.n_embd + i] = acc;
    }
    // order_s and red[0] are read above before the next token rewrites them.
    barrier();
  }
}
