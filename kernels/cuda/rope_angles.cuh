// The RoPE angle of one pair (kernels::rope_angles), shared by the kernels that rotate: rope.cu
// (queries and keys of a chunk) and kv_rotate.cu (cached keys moved by a position delta).
// The host computes theta_scale = freq_base^(-2/n_rot) and the ramp width as the CPU does
// (rope_angle_params). The formula follows the CPU operation by operation: theta_base is the
// same running product pos * theta_scale^i with every multiply-add unfused (__fmul_rn), so only
// cos/sin and the division by a frequency factor can differ from the CPU by a few ulp.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/cpu/ops.h"

namespace inferscope::cuda_kernels {

struct RopeAngleParams {
  float theta_scale = 1.0f;  // freq_base^(-2/n_rot)
  float freq_scale = 1.0f;
  float attn_factor = 1.0f;  // magnitude of cos and sin (1: a pure rotation)
  float yarn_ext_factor = 0.0f;  // 0: YaRN off
  float yarn_corr_low = 0.0f;
  float yarn_ramp_width = 0.001f;  // max(0.001, corr_high - corr_low)
};

// From the CPU's parameters, for n_rot rotated values (freq_factors, a host pointer, is not
// taken: the kernels get the device copy separately).
inline RopeAngleParams rope_angle_params(const kernels::RopeParams& p, int64_t n_rot) {
  RopeAngleParams a;
  a.theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(n_rot));
  a.freq_scale = p.freq_scale;
  a.attn_factor = p.attn_factor;
  a.yarn_ext_factor = p.yarn_ext_factor;
  a.yarn_corr_low = p.yarn_corr_low;
  a.yarn_ramp_width = std::max(0.001f, p.yarn_corr_high - p.yarn_corr_low);
  return a;
}

// cos and sin (times attn_factor) of pair i at position pos; freq_factors: [n_rot/2] device
// floats dividing each pair's frequency, or null.
__device__ __forceinline__ void rope_pair_cos_sin(float pos, int i, const RopeAngleParams& p,
                                                  const float* freq_factors, float* cos_out, float* sin_out) {
  float theta_base = pos;
  for (int j = 0; j < i; ++j) theta_base = __fmul_rn(theta_base, p.theta_scale);
  const float theta_extrap = freq_factors ? theta_base / freq_factors[i] : theta_base;
  float theta = __fmul_rn(p.freq_scale, theta_extrap);
  if (p.yarn_ext_factor != 0.0f) {
    const float y = (static_cast<float>(i) - p.yarn_corr_low) / p.yarn_ramp_width;
    const float mix = __fmul_rn(1.0f - fminf(1.0f, fmaxf(0.0f, y)), p.yarn_ext_factor);
    theta = __fmul_rn(theta, 1.0f - mix) + __fmul_rn(theta_extrap, mix);
  }
  *cos_out = __fmul_rn(cosf(theta), p.attn_factor);
  *sin_out = __fmul_rn(sinf(theta), p.attn_factor);
}

}  // namespace inferscope::cuda_kernels
