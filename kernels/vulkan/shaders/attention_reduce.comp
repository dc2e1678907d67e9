#version 450
#include "header.glsl"
// Second pass of split attention (attention.comp with n_split > 1): for each (token, head),
// combines the splits' unnormalized accumulators o_s, maxima m_s and sums l_s:
//   out = sum_s o_s exp(m_s - M) / sum_s l_s exp(m_s - M),  M = max over non-empty splits of m_s
// (a split with l_s = 0 saw no position), the denominator with exp(sinks[h] - M) added for
// learned sinks (has_sink_logits). One workgroup per (head, token), like attention.comp.

layout(constant_id = 1) const uint HEAD_DIM = 128;

layout(std430, set = 0, binding = 0) readonly buffer Partial { float partial[]; };  // [n_tokens][n_head][n_split][head_dim + 2]
layout(std430, set = 0, binding = 1) writeonly buffer Out { float outv[]; };        // [n_tokens][n_head * head_dim]
layout(std430, set = 0, binding = 2) readonly buffer SinkLogits { float sink_logits[]; };      // [n_head], has_sink_logits

layout(push_constant) uniform Push {
  uint n_tokens;
  uint n_head;
  uint n_split;
  uint partial_off;  // first element of each operand in its binding
  uint out_off;
  uint has_sink_logits;
  uint sink_logits_off;
} pc;

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint h = gl_WorkGroupID.x;
  const uint stride = HEAD_DIM + 2u;
  for (uint t = gl_WorkGroupID.y; t < pc.n_tokens; t += gl_NumWorkGroups.y) {
    const uint base = pc.partial_off + (t * pc.n_head + h) * pc.n_split * stride;
    // Every invocation derives M and the denominator itself (n_split is small).
    float mx = 0.0;
    bool any = false;
    for (uint s = 0; s < pc.n_split; ++s) {
      const float l = partial[base + s * stride + HEAD_DIM + 1u];
      const float m = partial[base + s * stride + HEAD_DIM];
      if (l > 0.0) {
        mx = any ? max(mx, m) : m;
        any = true;
      }
    }
    float den = 0.0;
    for (uint s = 0; s < pc.n_split; ++s) {
      const float l = partial[base + s * stride + HEAD_DIM + 1u];
      if (l > 0.0) den += l * exp(partial[base + s * stride + HEAD_DIM] - mx);
    }
    if (pc.has_sink_logits != 0u) den += exp(sink_logits[pc.sink_logits_off + h] - mx);
    const float inv = 1.0 / den;
    for (uint d = tid; d < HEAD_DIM; d += WORKGROUP_SIZE) {
      float num = 0.0;
      for (uint s = 0; s < pc.n_split; ++s) {
        const float l = partial[base + s * stride + HEAD_DIM + 1u];
        if (l > 0.0) num += partial[base + s * stride + d] * exp(partial[base + s * stride + HEAD_DIM] - mx);
      }
      outv[pc.out_off + (t * pc.n_head + h) * HEAD_DIM + d] = num * inv;
    }
  }
}
