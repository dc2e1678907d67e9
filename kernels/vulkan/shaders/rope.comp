#version 450
#include "header.glsl"
// Rotary position embedding in place on the query and key rows of a batch (kernels::rope_angles
// + kernels::rope_apply): token t has position pos0 + t; q is [n_tokens][n_head * head_dim], k is
// [n_tokens][n_head_kv * head_dim]; the first n_rot components of each head are rotated, as
// adjacent pairs (2i, 2i+1) or, with neox, as (i, i + n_rot/2). One workgroup per token (looping
// when there are more tokens than workgroups): the token's n_rot/2 angles go to shared memory,
// then the workgroup rotates every pair of every q and k head.
//
// The angles are rope_angles.glsl's (the CPU formula operation by operation).
// Preconditions: n_rot even, n_rot <= head_dim, n_rot <= 2 * kMaxPairs.

#include "rope_angles.glsl"

layout(std430, set = 0, binding = 0) buffer Q { float q[]; };
layout(std430, set = 0, binding = 1) buffer K { float k[]; };
layout(std430, set = 0, binding = 2) readonly buffer FreqFactors { float freq_factors[]; };  // [n_rot/2]

layout(push_constant) uniform Push {
  uint n_tokens;
  uint n_head;
  uint n_head_kv;     // 0: no k rows
  uint head_dim;
  uint n_rot;
  uint pos0;
  uint neox;
  uint has_freq_factors;
  RopeAngleParams angles;
  uint q_off;  // first element of each operand in its binding
  uint k_off;
  uint ff_off;
  float q_temp_beta;   // queries times 1 + beta ln(floor(pos / floor) + 1) (mistral3); 0: off
  float q_temp_floor;
} pc;

const uint kMaxPairs = 512;
shared float cos_s[kMaxPairs];
shared float sin_s[kMaxPairs];

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint half_rot = pc.n_rot / 2;
  const uint q_row = pc.n_head * pc.head_dim, k_row = pc.n_head_kv * pc.head_dim;
  const uint pairs = (pc.n_head + pc.n_head_kv) * half_rot;
  for (uint t = gl_WorkGroupID.x; t < pc.n_tokens; t += gl_NumWorkGroups.x) {
    for (uint i = tid; i < half_rot; i += WORKGROUP_SIZE) {
      const bool has_ff = pc.has_freq_factors != 0u;
      const vec2 cs = rope_pair_cos_sin(float(pc.pos0 + t), i, pc.angles, has_ff,
                                        has_ff ? freq_factors[pc.ff_off + i] : 1.0);
      cos_s[i] = cs.x;
      sin_s[i] = cs.y;
    }
    barrier();
    const float temperature =
        pc.q_temp_beta != 0.0 ? 1.0 + pc.q_temp_beta * log(floor(float(pc.pos0 + t) / pc.q_temp_floor) + 1.0) : 1.0;
    for (uint p = tid; p < pairs; p += WORKGROUP_SIZE) {
      const uint head = p / half_rot, i = p % half_rot;
      const uint ia = pc.neox != 0u ? i : 2u * i;
      const uint ib = pc.neox != 0u ? i + half_rot : 2u * i + 1u;
      const float c = cos_s[i], s = sin_s[i];
      if (head < pc.n_head) {
        const uint base = pc.q_off + t * q_row + head * pc.head_dim;
        const float a = q[base + ia], b = q[base + ib];
        precise float ra = a * c - b * s;
        precise float rb = a * s + b * c;
        q[base + ia] = ra * temperature;
        q[base + ib] = rb * temperature;
      } else {
        const uint base = pc.k_off + t * k_row + (head - pc.n_head) * pc.head_dim;
        const float a = k[base + ia], b = k[base + ib];
        precise float ra = a * c - b * s;
        precise float rb = a * s + b * c;
        k[base + ia] = ra;
        k[base + ib] = rb;
      }
    }
    // The angles are read above before the next token overwrites them.
    barrier();
  }
}
