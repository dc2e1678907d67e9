// The RoPE angle of one pair (kernels::rope_angles), shared by the shaders that rotate:
// rope.comp (queries and keys of a batch) and kv_rotate.comp (cached keys moved by a position
// delta). The host computes theta_scale = freq_base^(-2/n_rot) and the ramp width as the CPU does.
//
// The formula follows the CPU operation by operation: theta_base is the same running product
// pos * theta_scale^i, and precise keeps every multiply-add unfused, so only the cos/sin
// builtins and the division by a frequency factor can differ from the CPU by a few ulp.
// pos may be negative (kv_rotate's delta): cos_sin reduces negative angles too.
#ifndef ROPE_ANGLES_GLSL
#define ROPE_ANGLES_GLSL

#include "op_math.glsl"

struct RopeAngleParams {
  float theta_scale;      // freq_base^(-2/n_rot)
  float freq_scale;
  float attn_factor;      // magnitude of cos and sin (1: a pure rotation)
  float yarn_ext_factor;  // 0: YaRN off
  float yarn_corr_low;
  float yarn_ramp_width;  // max(0.001, corr_high - corr_low)
};

// (cos, sin) x attn_factor of pair i at position pos; freq_factor is the pair's divisor when
// has_freq_factor (Llama 3.1 rope_freqs, LongRoPE), else unused.
vec2 rope_pair_cos_sin(float pos, uint i, RopeAngleParams p, bool has_freq_factor, float freq_factor) {
  precise float theta_base = pos;
  for (uint j = 0u; j < i; ++j) theta_base = theta_base * p.theta_scale;
  precise float theta_extrap = has_freq_factor ? theta_base / freq_factor : theta_base;
  precise float theta = p.freq_scale * theta_extrap;
  if (p.yarn_ext_factor != 0.0) {
    precise float y = (float(i) - p.yarn_corr_low) / p.yarn_ramp_width;
    precise float mix_ = (1.0 - min(1.0, max(0.0, y))) * p.yarn_ext_factor;
    theta = theta * (1.0 - mix_) + theta_extrap * mix_;
  }
  const vec2 cs = cos_sin(theta);
  return vec2(cs.x * p.attn_factor, cs.y * p.attn_factor);
}

#endif
