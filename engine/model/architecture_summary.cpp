#include "engine/model/architecture_summary.h"

#include <algorithm>
#include <cstdio>

namespace inferscope {

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string attention(const ModelConfig& c) {
  std::string s = std::to_string(c.n_head) + " heads of " + std::to_string(c.head_dim) + ", " +
                  std::to_string(c.n_head_kv) + " KV heads";
  if (c.n_swa > 0) {
    s += "; window " + std::to_string(c.n_swa);
    if (!c.window_layers.empty()) {
      const auto windowed = std::count(c.window_layers.begin(), c.window_layers.end(), 1);
      s += " on " + std::to_string(windowed) + " of " + std::to_string(c.n_layer) + " layers";
      if (c.head_dim_swa > 0) s += " (heads of " + std::to_string(c.head_dim_swa) + ")";
    } else if (c.swa_period > 1) {
      s += " on " + std::to_string(c.swa_period - 1) + " of every " + std::to_string(c.swa_period) + " layers";
    } else {
      s += " on every layer";
    }
  }
  if (c.has_qk_norm) s += c.qk_norm_whole ? "; q/k norms over all heads" : "; q/k norms";
  if (c.arch == Architecture::GptOss) s += "; learned sinks";
  if (c.n_kv_shared > 0) s += "; the last " + std::to_string(c.n_kv_shared) + " layers reuse earlier layers' KV";
  if (c.attn_softcap > 0) s += "; scores capped at " + number(c.attn_softcap);
  if (c.attn_temp_scale > 0) s += "; temperature " + number(c.attn_temp_scale) + " per " + std::to_string(c.n_ctx_orig) + " positions";
  return s;
}

std::string feed_forward(const ModelConfig& c) {
  const std::string act = ffn_activation_name(c.ffn_activation);
  if (!c.is_moe() && !c.layer_ff.empty()) {
    const int64_t narrowest = *std::min_element(c.layer_ff.begin(), c.layer_ff.end());
    return act + ", " + std::to_string(narrowest) + " to " + std::to_string(c.n_ff) + " wide (per layer)";
  }
  if (!c.is_moe()) return act + ", " + std::to_string(c.n_ff) + " wide";
  std::string s = std::to_string(c.n_expert) + " experts of " + std::to_string(c.n_ff_expert) + " (" + act + "), " +
                  std::to_string(c.n_expert_used) + " used";
  if (c.n_ff_shared > 0) s += ", a shared expert of " + std::to_string(c.n_ff_shared);
  return s;
}

std::string rope(const ModelConfig& c) {
  std::string s = std::string(c.rope_layout == RopeLayout::Neox ? "neox" : "normal") + ", base " +
                  number(c.rope_freq_base) + ", " + std::to_string(c.n_rot) + " dims";
  if (c.rope_scaling != RopeScaling::None && c.rope_freq_scale != 1.0f) {
    s += ", " + std::string(rope_scaling_name(c.rope_scaling)) + " x" + number(1.0 / c.rope_freq_scale);
  }
  if (c.has_swa_rope) s += "; window layers base " + number(c.rope_freq_base_swa) + ", unscaled";
  if (c.n_no_rope_step > 0) s += "; none on every " + std::to_string(c.n_no_rope_step) + "th layer";
  return s;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> architecture_summary(const ModelConfig& c) {
  std::vector<std::pair<std::string, std::string>> rows = {
      {"Layers", std::to_string(c.n_layer) + ", embedding " + std::to_string(c.n_embd)},
      {"Attention", attention(c)},
      {"Feed-forward", feed_forward(c)},
  };
  if (c.n_rot > 0) rows.emplace_back("RoPE", rope(c));
  const char* where = !c.has_pre_norms   ? ", after attention and the FFN only"
                      : c.has_post_norms ? ", before and after attention and the FFN"
                                         : "";
  rows.emplace_back("Norms", "RMSNorm, eps " + number(c.rms_eps) + where);
  if (c.embd_scale != 1.0f) {
    std::string e = "times " + number(c.embd_scale);
    if (c.n_embd_per_layer > 0) e += "; per-layer inputs of " + std::to_string(c.n_embd_per_layer);
    rows.emplace_back("Embeddings", e);
  }
  if (c.final_softcap > 0) rows.emplace_back("Logits", "capped at " + number(c.final_softcap));
  rows.emplace_back("Context", std::to_string(c.n_ctx_train) + " trained");
  return rows;
}

}  // namespace inferscope
