// The RoPE angle of one pair (kernels::rope_angles) on the device, shared by the kernels that
// rotate: rope.cu (queries and keys of a chunk) and kv_rotate.cu (cached keys moved by a position
// delta). The formula follows the CPU operation by operation: theta_base is the same running
// product pos * theta_scale^i with every multiply-add unfused (__fmul_rn), so only cos/sin and
// the division by a frequency factor can differ from the CPU by a few ulp.
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/rope_angles.h"

namespace inferscope::cuda_kernels {

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
