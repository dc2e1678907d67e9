// The parameters of RoPE's angles as the CUDA kernels take them (rope_angles.cuh computes one
// pair's angle from them on the device): the host computes theta_scale = freq_base^(-2/n_rot)
// and the ramp width as the CPU does.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/formats/rope_params.h"

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

}  // namespace inferscope::cuda_kernels
