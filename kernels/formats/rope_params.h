// The parameters of RoPE's angles, shared by every backend's kernels (the CPU's rope_angles,
// the Vulkan and CUDA RoPE and KV-rotation kernels) and computed once per session from the
// model and the context (engine/model/rope_context.h).
#pragma once

#include <cmath>

namespace inferscope::kernels {

// How one position's RoPE angles are computed. For pair i (0 <= i < n_rot/2):
//   theta_extrap = pos * freq_base^(-2i/n_rot) / freq_factors[i]   (factors: 1 when null)
//   theta_interp = freq_scale * theta_extrap                        (linear scaling)
//   theta        = YaRN off: theta_interp; on: theta_interp (1 - m) + theta_extrap m, with
//                  m = yarn_ext_factor * (1 - clamp((i - corr_low) / max(0.001, corr_high - corr_low), 0, 1))
//   cos, sin     = attn_factor * (cos theta, sin theta)
// The factors divide the frequency: Llama 3.1's rope_freqs.weight, Phi-3's LongRoPE
// rope_factors_long/short.weight (llama.cpp's ggml_rope_ext with freq_factors).
struct RopeParams {
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;
  const float* freq_factors = nullptr;  // [n_rot/2], or nullptr
  float attn_factor = 1.0f;             // magnitude of cos/sin (LongRoPE, YaRN mscale)
  float yarn_ext_factor = 0.0f;         // 0 = YaRN off
  float yarn_corr_low = 0.0f;           // pairs below this keep theta_extrap (ramp start)
  float yarn_corr_high = 0.0f;          // pairs above this take theta_interp (ramp end)
  // Queries only (the rope op; keys and kv_rotate ignore it): Llama 4's and Ministral 3's
  // attention temperature, q *= 1 + q_temp_beta * ln(floor(pos / q_temp_floor) + 1), so 1 below
  // q_temp_floor positions. 0: off. Precondition when on: n_rot == head_dim (every value rotates).
  float q_temp_beta = 0.0f;
  float q_temp_floor = 0.0f;
};

// The query temperature of position pos (1 when off), in F32 as every backend computes it.
static inline float query_temperature(const RopeParams& p, float pos) {
  if (p.q_temp_beta == 0.0f) return 1.0f;
  return 1.0f + p.q_temp_beta * std::log(std::floor(pos / p.q_temp_floor) + 1.0f);
}

}  // namespace inferscope::kernels
