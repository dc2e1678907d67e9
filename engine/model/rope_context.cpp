#include "engine/model/rope_context.h"

#include "kernels/cpu/ops.h"

namespace inferscope {

kernels::RopeParams rope_params_for_context(const ModelConfig& c, const ModelWeights& w, int64_t n_ctx) {
  kernels::RopeParams p;
  p.freq_base = c.rope_freq_base;
  p.freq_scale = c.rope_freq_scale;
  p.attn_factor = c.rope_attn_factor;
  if (w.rope_freqs.present()) {
    p.freq_factors = w.rope_freqs.data;
  } else if (w.rope_factors_long.present()) {
    p.freq_factors = n_ctx > c.n_ctx_orig ? w.rope_factors_long.data : w.rope_factors_short.data;
  }
  if (c.attn_temp_scale > 0.0f) {
    p.q_temp_beta = c.attn_temp_scale;
    p.q_temp_floor = static_cast<float>(c.n_ctx_orig);
  }
  if (c.rope_scaling == RopeScaling::Yarn) {
    p.yarn_ext_factor = 1.0f;
    kernels::rope_yarn_corr_dims(c.n_rot, c.n_ctx_orig, c.rope_freq_base, c.yarn_beta_fast, c.yarn_beta_slow,
                                 &p.yarn_corr_low, &p.yarn_corr_high);
  }
  return p;
}

kernels::RopeParams rope_params_for_window_layers(const ModelConfig& c, const kernels::RopeParams& full) {
  kernels::RopeParams p = full;
  if (c.has_swa_rope) {
    p.freq_base = c.rope_freq_base_swa;
    p.freq_scale = c.rope_freq_scale_swa;
  }
  if (c.rope_freqs_full_only) p.freq_factors = nullptr;
  return p;
}

}  // namespace inferscope
