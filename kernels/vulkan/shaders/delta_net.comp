#version 450
#include "header.glsl"
// The Gated DeltaNet recurrence over one span's n rows, step by step (kernels::delta_net_steps),
// from the inputs delta_net_prepare.comp made ready. Value head h reads key head kh
// (DeltaNetShape::key_head) and keeps a [D values][D keys] state S; each row t:
//   S = exp(g_t) S;   u = beta_t (v_t - S k_t);   S += u k_t^T;   o_t = S q_t.
// The value rows j of S are independent: one invocation per (h, j) holds row j in registers for
// the whole span, workgroup (j block, h) sharing the row's k and q. conv: [n][channels] (q heads,
// k heads, v heads of D values); g, beta: [n][n_v_heads]; out: [n][n_v_heads * D]; state:
// [n_v_heads][D][D], read (zeros when fresh) and written back.
// Specialization constant 1: D, the head size.

layout(constant_id = 1) const uint D = 128;

layout(std430, set = 0, binding = 0) readonly buffer Conv { float conv[]; };
layout(std430, set = 0, binding = 1) readonly buffer G { float g[]; };
layout(std430, set = 0, binding = 2) readonly buffer Beta { float beta[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { float outv[]; };
layout(std430, set = 0, binding = 4) buffer State { float state[]; };

layout(push_constant) uniform Push {
  uint n;
  uint channels;
  uint n_k_heads;
  uint n_v_heads;
  uint grouped_heads;  // DeltaNetShape::grouped_heads
  uint fresh;          // 1: the span starts at position 0 (a zero state)
  uint conv_off;       // first element of each operand in its binding
  uint g_off;
  uint beta_off;
  uint out_off;
  uint s_off;
} pc;

shared float k_row[D];
shared float q_row[D];

uint key_head(uint h) {
  return pc.grouped_heads != 0u ? h / (pc.n_v_heads / pc.n_k_heads) : h % pc.n_k_heads;
}

void main() {
  const uint h = gl_WorkGroupID.y;
  const uint j = gl_WorkGroupID.x * WORKGROUP_SIZE + gl_LocalInvocationID.x;
  const bool owns_row = j < D;
  const uint key_dim = pc.n_k_heads * D;
  const uint q_col = key_head(h) * D, k_col = key_dim + q_col, v_col = 2u * key_dim + h * D + j;
  const uint s_row = pc.s_off + (h * D + j) * D;
  float s[D];
  [[unroll]] for (uint i = 0u; i < D; ++i) s[i] = owns_row && pc.fresh == 0u ? state[s_row + i] : 0.0;
  for (uint t = 0u; t < pc.n; ++t) {
    const uint row = pc.conv_off + t * pc.channels;
    barrier();  // the previous row's k and q are read
    for (uint i = gl_LocalInvocationID.x; i < D; i += WORKGROUP_SIZE) {
      k_row[i] = conv[row + k_col + i];
      q_row[i] = conv[row + q_col + i];
    }
    barrier();
    if (!owns_row) continue;
    const float decay = exp(g[pc.g_off + t * pc.n_v_heads + h]);
    float sk = 0.0;
    [[unroll]] for (uint i = 0u; i < D; ++i) {
      s[i] *= decay;
      sk += s[i] * k_row[i];
    }
    const float u = beta[pc.beta_off + t * pc.n_v_heads + h] * (conv[row + v_col] - sk);
    float o = 0.0;
    [[unroll]] for (uint i = 0u; i < D; ++i) {
      s[i] += u * k_row[i];
      o += s[i] * q_row[i];
    }
    outv[pc.out_off + t * pc.n_v_heads * D + h * D + j] = o;
  }
  if (owns_row) {
    [[unroll]] for (uint i = 0u; i < D; ++i) state[s_row + i] = s[i];
  }
}
