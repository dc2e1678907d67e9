#include "engine/model/model_config.h"

#include <algorithm>
#include <cmath>

namespace inferscope {

namespace {

struct ArchEntry {
  const char* name;
  Architecture arch;
  RopeLayout rope;
};

constexpr ArchEntry kArchitectures[] = {
    {"llama", Architecture::Llama, RopeLayout::Normal},
    {"qwen2", Architecture::Qwen2, RopeLayout::Neox},
    {"qwen2moe", Architecture::Qwen2Moe, RopeLayout::Neox},
    {"qwen3", Architecture::Qwen3, RopeLayout::Neox},
    {"qwen3moe", Architecture::Qwen3Moe, RopeLayout::Neox},
    {"phi3", Architecture::Phi3, RopeLayout::Neox},
    {"gemma", Architecture::Gemma, RopeLayout::Neox},
    {"gemma2", Architecture::Gemma2, RopeLayout::Neox},
    {"gemma3", Architecture::Gemma3, RopeLayout::Neox},
    {"smollm3", Architecture::SmolLm3, RopeLayout::Normal},
    {"gpt-oss", Architecture::GptOss, RopeLayout::Neox},
    {"mistral3", Architecture::Mistral3, RopeLayout::Normal},
    {"olmo2", Architecture::Olmo2, RopeLayout::Neox},
    // Qwen3.5's RoPE is llama.cpp's IMROPE, whose sections rotate a text token's equal
    // positions exactly as NEOX does: text only here.
    {"qwen35", Architecture::Qwen35, RopeLayout::Neox},
    {"qwen35moe", Architecture::Qwen35Moe, RopeLayout::Neox},
    {"qwen3next", Architecture::Qwen3Next, RopeLayout::Neox},
    {"gemma4", Architecture::Gemma4, RopeLayout::Neox},
    {"bert", Architecture::Bert, RopeLayout::Normal},
};

#define TRY_ASSIGN(lhs, expr)              \
  do {                                     \
    auto _r = (expr);                      \
    if (!_r) return _r.status();           \
    lhs = *_r;                             \
  } while (0)

Status check_range(const gguf::File& f, const std::string& key, int64_t value, int64_t lo, int64_t hi) {
  if (value < lo || value > hi) {
    return Status::error(f.error_prefix() + "metadata key '" + key + "' is " + std::to_string(value) +
                         ", expected a value in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return Status::ok();
}

// A per-layer array (INT32 array of length n_layer) is accepted when all entries are equal.
Result<int64_t> get_uniform_int(const gguf::File& f, const std::string& key, int64_t fallback, bool required) {
  const gguf::Value* v = f.find(key);
  if (v == nullptr) {
    if (required) return f.get_int(key);
    return fallback;
  }
  if (v->type != gguf::ValueType::ARRAY) return f.get_int(key);
  auto values = f.get_int_array(key);
  if (!values) return values.status();
  if (values->empty()) return Result<int64_t>::error(f.error_prefix() + "metadata key '" + key + "' is an empty array");
  for (int64_t x : *values) {
    if (x != values->front()) {
      return Result<int64_t>::error(f.error_prefix() + "metadata key '" + key +
                                    "' varies per layer, which is not supported");
    }
  }
  return values->front();
}

// Every `<arch>.rope.scaling.*` key llama.cpp defines is read here or refused by name:
//   type (none | linear | yarn | longrope; absent = linear, as llama.cpp), factor (or the older
//   rope.scale_linear), original_context_length, attn_factor, finetuned (informational only),
//   yarn_beta_fast, yarn_beta_slow, yarn_log_multiplier (DeepSeek's; refused unless 0),
//   yarn_ext_factor and yarn_attn_factor (refused unless at their defaults).
Status read_rope_scaling(const gguf::File& f, const std::string& a, ModelConfig& c) {
  std::string type;
  TRY_ASSIGN(type, f.get_string_or(a + "rope.scaling.type", "linear"));
  if (type == "none") c.rope_scaling = RopeScaling::None;
  else if (type == "linear") c.rope_scaling = RopeScaling::Linear;
  else if (type == "yarn") c.rope_scaling = RopeScaling::Yarn;
  else if (type == "longrope") c.rope_scaling = RopeScaling::LongRope;
  else {
    return Status::error(f.error_prefix() + "metadata key '" + a + "rope.scaling.type' is '" + type +
                         "', which is not supported (supported: none, linear, yarn, longrope)");
  }
  double factor = 0;
  TRY_ASSIGN(factor, f.get_float_or(a + "rope.scaling.factor", 0.0));
  if (factor == 0.0) TRY_ASSIGN(factor, f.get_float_or(a + "rope.scale_linear", 0.0));
  if (!(factor >= 0.0 && factor <= 1e6)) {
    return Status::error(f.error_prefix() + "metadata key '" + a + "rope.scaling.factor' is " +
                         std::to_string(factor) + ", expected a value in (0, 1e6]");
  }
  if (factor == 0.0) factor = 1.0;
  // llama.cpp never scales when the type is none.
  c.rope_freq_scale = c.rope_scaling == RopeScaling::None ? 1.0f : static_cast<float>(1.0 / factor);

  TRY_ASSIGN(c.n_ctx_orig, f.get_int_or(a + "rope.scaling.original_context_length", c.n_ctx_train));
  INFERSCOPE_RETURN_IF_ERROR(
      check_range(f, a + "rope.scaling.original_context_length", c.n_ctx_orig, 1, int64_t(1) << 24));
  bool finetuned = false;  // informational in llama.cpp too: no effect on the math
  TRY_ASSIGN(finetuned, f.get_bool_or(a + "rope.scaling.finetuned", false));
  (void)finetuned;

  // Phi-3's converter writes attn_factor = sqrt(1 + ln(s) / ln(original context)) next to the
  // LongRoPE factors (s = context / original context); older files lack the key, and Hugging
  // Face's Phi-3 applies that value regardless, so it is computed the same way here.
  double attn_default = 1.0;
  const double s = static_cast<double>(c.n_ctx_train) / static_cast<double>(c.n_ctx_orig);
  if (f.find_tensor("rope_factors_long.weight") != nullptr && s > 1.0 && c.n_ctx_orig > 1) {
    attn_default = std::sqrt(1.0 + std::log(s) / std::log(static_cast<double>(c.n_ctx_orig)));
  }
  double attn = 0;
  TRY_ASSIGN(attn, f.get_float_or(a + "rope.scaling.attn_factor", attn_default));
  if (!(attn > 0.0 && attn <= 16.0)) {
    return Status::error(f.error_prefix() + "metadata key '" + a + "rope.scaling.attn_factor' is " +
                         std::to_string(attn) + ", expected a value in (0, 16]");
  }
  c.rope_attn_factor = static_cast<float>(attn);

  // YaRN's mscale_all_dim (Ministral 3: 1): the magnitude becomes mscale(1) / mscale(log_mul),
  // mscale(m) = 1 + 0.1 m ln(factor), as llama.cpp computes it (DeepSeek 2's own case is not
  // an architecture here).
  double log_mul = 0;
  TRY_ASSIGN(log_mul, f.get_float_or(a + "rope.scaling.yarn_log_multiplier", 0.0));
  if (!(log_mul >= 0.0 && log_mul <= 100.0)) {
    return Status::error(f.error_prefix() + "metadata key '" + a + "rope.scaling.yarn_log_multiplier' is " +
                         std::to_string(log_mul) + ", expected a value in [0, 100]");
  }
  double beta = 0;
  TRY_ASSIGN(beta, f.get_float_or(a + "rope.scaling.yarn_beta_fast", 32.0));
  c.yarn_beta_fast = static_cast<float>(beta);
  TRY_ASSIGN(beta, f.get_float_or(a + "rope.scaling.yarn_beta_slow", 1.0));
  c.yarn_beta_slow = static_cast<float>(beta);
  if (!(c.yarn_beta_fast > 0.0f && c.yarn_beta_slow > 0.0f)) {
    return Status::error(f.error_prefix() + "rope.scaling.yarn_beta_fast and yarn_beta_slow must be positive");
  }
  double ext = 0;
  TRY_ASSIGN(ext, f.get_float_or(a + "rope.scaling.yarn_ext_factor", 1.0));
  if (ext != 1.0) {
    return Status::error(f.error_prefix() + "metadata key '" + a + "rope.scaling.yarn_ext_factor' is " +
                         std::to_string(ext) + ": only YaRN's full ramp (1) is supported");
  }
  if (f.find(a + "rope.scaling.yarn_attn_factor") != nullptr) {
    return Status::error(f.error_prefix() + "metadata key '" + a +
                         "rope.scaling.yarn_attn_factor' (an explicit YaRN attention factor) is not supported");
  }
  if (c.rope_scaling == RopeScaling::Yarn && factor > 1.0) {
    // YaRN's magnitude correction, 0.1 ln(factor) + 1 (llama.cpp's and Hugging Face's default),
    // divided by the same with mscale_all_dim when the file gives one.
    const double mscale = 1.0 + 0.1 * std::log(factor);
    c.rope_attn_factor *= static_cast<float>(log_mul == 0.0 ? mscale : mscale / (1.0 + 0.1 * log_mul * std::log(factor)));
  }
  return Status::ok();
}

// A window on some layers: attention.sliding_window (0: none; `required` refuses a file
// without it) and attention.sliding_window_pattern (a period, default_period when absent; a
// per-layer array is refused).
Status read_window_pattern(const gguf::File& f, const std::string& a, ModelConfig& c, bool required,
                           int64_t default_period) {
  if (required) {
    TRY_ASSIGN(c.n_swa, f.get_int(a + "attention.sliding_window"));
  } else {
    TRY_ASSIGN(c.n_swa, f.get_int_or(a + "attention.sliding_window", 0));
  }
  INFERSCOPE_RETURN_IF_ERROR(check_range(f, a + "attention.sliding_window", c.n_swa, 0, int64_t(1) << 24));
  if (c.n_swa == 0 && !required) return Status::ok();
  const gguf::Value* pattern = f.find(a + "attention.sliding_window_pattern");
  if (pattern != nullptr && pattern->type == gguf::ValueType::ARRAY) {
    std::vector<int64_t> flags;
    TRY_ASSIGN(flags, f.get_int_array(a + "attention.sliding_window_pattern"));
    if (static_cast<int64_t>(flags.size()) != c.n_layer) {
      return Status::error(f.error_prefix() + "attention.sliding_window_pattern has " + std::to_string(flags.size()) +
                           " entries for " + std::to_string(c.n_layer) + " layers");
    }
    for (int64_t flag : flags) c.window_layers.push_back(flag != 0 ? 1 : 0);
    return Status::ok();
  }
  TRY_ASSIGN(c.swa_period, f.get_int_or(a + "attention.sliding_window_pattern", default_period));
  return check_range(f, a + "attention.sliding_window_pattern", c.swa_period, 0, 1 << 16);
}

// The window layers' own RoPE base (rope.freq_base_swa, `fallback` when absent), unscaled.
Status read_swa_rope(const gguf::File& f, const std::string& a, ModelConfig& c, double fallback) {
  c.has_swa_rope = true;
  double base = 0;
  TRY_ASSIGN(base, f.get_float_or(a + "rope.freq_base_swa", fallback));
  if (!(base > 0.0)) return Status::error(f.error_prefix() + "rope.freq_base_swa must be positive");
  c.rope_freq_base_swa = static_cast<float>(base);
  return Status::ok();
}

// Gemma 3: gemma2's post-norms without soft-capping of scores (the logits' is optional), q/k
// norms, a window on five of every six layers (attention.sliding_window_pattern) with a RoPE
// of their own (rope.freq_base_swa, unscaled), and the 27B's query scale.
Status read_gemma3_options(const gguf::File& f, const std::string& a, ModelConfig& c) {
  c.has_post_norms = true;
  c.has_qk_norm = true;
  double cap = 0;
  TRY_ASSIGN(cap, f.get_float_or(a + "final_logit_softcapping", 0.0));
  if (cap < 0) return Status::error(f.error_prefix() + "gemma3 final_logit_softcapping must not be negative");
  c.final_softcap = static_cast<float>(cap);
  INFERSCOPE_RETURN_IF_ERROR(read_window_pattern(f, a, c, false, 6));
  if (c.n_swa == 0) return Status::ok();
  INFERSCOPE_RETURN_IF_ERROR(read_swa_rope(f, a, c, 10000.0));
  // llama.cpp (after gemma_pytorch): the 27B (62 layers) scales queries by 1/sqrt(n_embd / n_head).
  if (c.n_layer == 62) c.attn_scale = 1.0f / std::sqrt(static_cast<float>(c.n_embd / c.n_head));
  return Status::ok();
}

// A per-layer feed_forward_length array that varies: each layer's width in layer_ff, n_ff the widest.
Status read_layer_ff(const gguf::File& f, const std::string& a, ModelConfig& c) {
  const gguf::Value* v = f.find(a + "feed_forward_length");
  if (v == nullptr || v->type != gguf::ValueType::ARRAY) return Status::ok();
  TRY_ASSIGN(c.layer_ff, f.get_int_array(a + "feed_forward_length"));
  if (static_cast<int64_t>(c.layer_ff.size()) != c.n_layer) {
    return Status::error(f.error_prefix() + "feed_forward_length has " + std::to_string(c.layer_ff.size()) +
                         " entries for " + std::to_string(c.n_layer) + " layers");
  }
  for (int64_t width : c.layer_ff) INFERSCOPE_RETURN_IF_ERROR(check_range(f, a + "feed_forward_length", width, 1, 1 << 20));
  c.n_ff = *std::max_element(c.layer_ff.begin(), c.layer_ff.end());
  return Status::ok();
}

// Gemma 4 (dense; its MoE size is refused): gemma3's norms, soft-capped logits and GeGLU with
// a per-layer window pattern whose layers have heads of their own size and RoPE (base
// rope.freq_base_swa, rope.dimension_count_swa dims), the full layers' RoPE "proportional"
// (rope_freqs), queries unscaled (attention scale 1: the q/k norms set the scores' size), V
// normalized, the last shared_kv_layers layers reading earlier layers' KV, per-layer inputs,
// and FFN widths per layer.
Status read_gemma4_options(const gguf::File& f, const std::string& a, ModelConfig& c) {
  if (c.n_expert > 0) {
    return Status::error(f.error_prefix() + "Gemma 4's mixture-of-experts size (26B-A4B) is not supported yet: "
                         "its dense sizes are");
  }
  c.has_post_norms = true;
  c.has_qk_norm = true;
  c.has_v_norm = true;
  c.attn_scale = 1.0f;
  c.rope_freqs_full_only = true;
  double cap = 0;
  TRY_ASSIGN(cap, f.get_float_or(a + "final_logit_softcapping", 0.0));
  if (cap < 0) return Status::error(f.error_prefix() + "gemma4 final_logit_softcapping must not be negative");
  c.final_softcap = static_cast<float>(cap);
  INFERSCOPE_RETURN_IF_ERROR(read_window_pattern(f, a, c, true, 0));
  INFERSCOPE_RETURN_IF_ERROR(read_swa_rope(f, a, c, 10000.0));
  TRY_ASSIGN(c.head_dim_swa, f.get_int_or(a + "attention.key_length_swa", c.head_dim));
  int64_t value_swa = 0;
  TRY_ASSIGN(value_swa, f.get_int_or(a + "attention.value_length_swa", c.head_dim_swa));
  INFERSCOPE_RETURN_IF_ERROR(check_range(f, a + "attention.key_length_swa", c.head_dim_swa, 2, 1024));
  if (value_swa != c.head_dim_swa || c.head_dim_swa % 2 != 0) {
    return Status::error(f.error_prefix() + "attention.key_length_swa and value_length_swa must be equal and even");
  }
  TRY_ASSIGN(c.n_rot_swa, f.get_int_or(a + "rope.dimension_count_swa", c.head_dim_swa));
  if (c.n_rot_swa <= 0 || c.n_rot_swa > c.head_dim_swa || c.n_rot_swa % 2 != 0) {
    return Status::error(f.error_prefix() + "rope.dimension_count_swa must be even and at most key_length_swa");
  }
  TRY_ASSIGN(c.n_kv_shared, f.get_int_or(a + "attention.shared_kv_layers", 0));
  INFERSCOPE_RETURN_IF_ERROR(check_range(f, a + "attention.shared_kv_layers", c.n_kv_shared, 0, c.n_layer - 2));
  for (int64_t l = c.n_layer - c.n_kv_shared; l < c.n_layer; ++l) {
    const int64_t source = c.kv_layer(l);
    if (c.uses_sliding_window(source) != c.uses_sliding_window(l)) {
      return Status::error(f.error_prefix() + "shared-KV layer " + std::to_string(l) + " would read layer " +
                           std::to_string(source) + "'s KV, which is of the other kind (window or full)");
    }
  }
  TRY_ASSIGN(c.n_embd_per_layer, f.get_int_or(a + "embedding_length_per_layer_input", 0));
  INFERSCOPE_RETURN_IF_ERROR(check_range(f, a + "embedding_length_per_layer_input", c.n_embd_per_layer, 0, 1 << 14));
  return read_layer_ff(f, a, c);
}

// gpt-oss (llama.cpp's LLM_ARCH_OPENAI_MOE): learned attention sinks, a window on the even
// layers (attention.sliding_window, required; sliding_window_pattern, default 2), the clamped
// SwiGLU, and experts of expert_feed_forward_length (required) picked by the top-k of the
// router's logits and weighted by their softmax (the renormalized top-k softmax: the same).
Status read_gpt_oss_options(const gguf::File& f, const std::string& a, ModelConfig& c) {
  if (c.n_expert == 0) return Status::error(f.error_prefix() + "gpt-oss requires expert_count > 0");
  c.ffn_activation = FfnActivation::SwigluOai;
  c.gating = ExpertGating::SoftmaxTopKRenormalized;
  TRY_ASSIGN(c.n_ff_expert, f.get_int(a + "expert_feed_forward_length"));
  INFERSCOPE_RETURN_IF_ERROR(check_range(f, a + "expert_feed_forward_length", c.n_ff_expert, 1, 1 << 20));
  INFERSCOPE_RETURN_IF_ERROR(read_window_pattern(f, a, c, true, 2));
  double base = 0;
  TRY_ASSIGN(base, f.get_float_or(a + "rope.freq_base_swa", c.rope_freq_base));
  if (static_cast<float>(base) != c.rope_freq_base) {
    return Status::error(f.error_prefix() + "gpt-oss with a RoPE base of its own for the window layers "
                         "(rope.freq_base_swa) is not supported");
  }
  return Status::ok();
}

// OLMo 2: norms after attention and FFN instead of before, and one RMSNorm over all of Q and of
// K; OLMo 3 (the same architecture name) adds a window on three of every four layers
// (attention.sliding_window_pattern, default 4) whose RoPE is unscaled (rope.freq_base_swa,
// default the global base).
Status read_olmo2_options(const gguf::File& f, const std::string& a, ModelConfig& c) {
  if (c.n_expert > 0) return Status::error(f.error_prefix() + "olmo2 has no experts (OLMoE is another architecture)");
  c.has_post_norms = true;
  c.has_pre_norms = false;
  c.has_qk_norm = true;
  c.qk_norm_whole = true;
  INFERSCOPE_RETURN_IF_ERROR(read_window_pattern(f, a, c, false, 4));
  if (c.n_swa == 0) return Status::ok();
  return read_swa_rope(f, a, c, c.rope_freq_base);
}

// Qwen3.5 (llama.cpp's qwen35, and qwen35moe with its experts) and Qwen3-Next (qwen3next: Qwen3.5
// MoE's layers before it, its RoPE plain NEOX): Gated DeltaNet layers (DeltaNetShape) with full-attention ones
// every full_attention_interval-th layer (default 4: layers 3, 7, ...), those with per-head
// q/k norms, partial RoPE (rope.dimension_sections: text positions only) and a gated output.
// block_count counts the multi-token-prediction layers (nextn_predict_layers) after the others.
Status read_qwen35_options(const gguf::File& f, const std::string& a, ModelConfig& c) {
  c.has_qk_norm = true;
  c.has_attn_gate = true;
  TRY_ASSIGN(c.n_nextn, f.get_int_or(a + "nextn_predict_layers", 0));
  INFERSCOPE_RETURN_IF_ERROR(check_range(f, a + "nextn_predict_layers", c.n_nextn, 0, c.n_layer - 1));
  c.n_layer -= c.n_nextn;
  DeltaNetShape& d = c.delta_net;
  int64_t inner = 0;
  TRY_ASSIGN(d.conv_kernel, f.get_int(a + "ssm.conv_kernel"));
  TRY_ASSIGN(inner, f.get_int(a + "ssm.inner_size"));
  TRY_ASSIGN(d.head_dim, f.get_int(a + "ssm.state_size"));
  TRY_ASSIGN(d.n_v_heads, f.get_int(a + "ssm.time_step_rank"));
  TRY_ASSIGN(d.n_k_heads, f.get_int(a + "ssm.group_count"));
  INFERSCOPE_RETURN_IF_ERROR(check_range(f, a + "ssm.conv_kernel", d.conv_kernel, 2, 16));
  INFERSCOPE_RETURN_IF_ERROR(check_range(f, a + "ssm.state_size", d.head_dim, 1, 1024));
  INFERSCOPE_RETURN_IF_ERROR(check_range(f, a + "ssm.group_count", d.n_k_heads, 1, 1024));
  INFERSCOPE_RETURN_IF_ERROR(check_range(f, a + "ssm.time_step_rank", d.n_v_heads, d.n_k_heads, 1024));
  if (d.n_v_heads % d.n_k_heads != 0 || inner != d.value_dim()) {
    return Status::error(f.error_prefix() + "the DeltaNet value heads (ssm.time_step_rank " +
                         std::to_string(d.n_v_heads) + ") must be a multiple of its key heads (ssm.group_count " +
                         std::to_string(d.n_k_heads) + ") and ssm.inner_size (" + std::to_string(inner) +
                         ") their total size, value heads x ssm.state_size");
  }
  d.grouped_heads = c.arch == Architecture::Qwen3Next;
  if (f.find(a + "attention.recurrent_layers") != nullptr) {
    std::vector<int64_t> flags;
    TRY_ASSIGN(flags, f.get_int_array(a + "attention.recurrent_layers"));
    if (static_cast<int64_t>(flags.size()) < c.n_layer) {
      return Status::error(f.error_prefix() + "attention.recurrent_layers has fewer entries than layers");
    }
    for (int64_t l = 0; l < c.n_layer; ++l) c.recurrent_layer.push_back(flags[static_cast<size_t>(l)] != 0 ? 1 : 0);
  } else {
    int64_t interval = 0;
    TRY_ASSIGN(interval, f.get_int_or(a + "full_attention_interval", 4));
    INFERSCOPE_RETURN_IF_ERROR(check_range(f, a + "full_attention_interval", interval, 1, 1024));
    for (int64_t l = 0; l < c.n_layer; ++l) c.recurrent_layer.push_back((l + 1) % interval != 0 ? 1 : 0);
  }
  return Status::ok();
}

// Gemma: scaled embeddings, GeGLU, and for gemma2 post-norms, soft-capping and a sliding window
// on even layers; gemma3 above. Phi3: a sliding window on every layer when the file has one.
// SmolLM3: no RoPE on every 4th layer.
Status read_architecture_options(const gguf::File& f, const std::string& a, ModelConfig& c) {
  if (c.arch == Architecture::Gemma || c.arch == Architecture::Gemma2 || c.arch == Architecture::Gemma3 ||
      c.arch == Architecture::Gemma4) {
    c.embd_scale = std::sqrt(static_cast<float>(c.n_embd));
    c.ffn_activation = FfnActivation::GeluTanh;
  }
  if (c.arch == Architecture::Gemma3) return read_gemma3_options(f, a, c);
  if (c.arch == Architecture::Gemma4) return read_gemma4_options(f, a, c);
  if (c.arch == Architecture::GptOss) return read_gpt_oss_options(f, a, c);
  if (c.arch == Architecture::Olmo2) return read_olmo2_options(f, a, c);
  if (c.arch == Architecture::Qwen35 || c.arch == Architecture::Qwen35Moe || c.arch == Architecture::Qwen3Next) {
    return read_qwen35_options(f, a, c);
  }
  if (c.arch == Architecture::Mistral3) {
    // Ministral 3's attention temperature over original_context_length positions (llama.cpp's
    // n_attn_temp_floor_scale); every value of a head must rotate for the rope op to scale it.
    double temp = 0;
    TRY_ASSIGN(temp, f.get_float_or(a + "attention.temperature_scale", 0.0));
    if (!(temp >= 0.0 && temp <= 10.0)) {
      return Status::error(f.error_prefix() + "attention.temperature_scale must be in [0, 10]");
    }
    c.attn_temp_scale = static_cast<float>(temp);
    if (c.attn_temp_scale > 0.0f && c.n_rot != c.head_dim) {
      return Status::error(f.error_prefix() + "attention temperature scaling with partial RoPE is not supported");
    }
  }
  if (c.arch == Architecture::SmolLm3) c.n_no_rope_step = 4;
  if (c.arch == Architecture::Gemma2) {
    c.has_post_norms = true;
    double cap = 0;
    TRY_ASSIGN(cap, f.get_float_or(a + "attn_logit_softcapping", 50.0));
    c.attn_softcap = static_cast<float>(cap);
    TRY_ASSIGN(cap, f.get_float_or(a + "final_logit_softcapping", 30.0));
    c.final_softcap = static_cast<float>(cap);
    if (c.attn_softcap < 0 || c.final_softcap < 0) {
      return Status::error(f.error_prefix() + "gemma2 soft-capping values must not be negative");
    }
    c.swa_period = 2;
    // llama.cpp scales gemma2-27B's queries (46 layers) by 1/sqrt(n_embd / n_head), the
    // smaller ones by 1/sqrt(head_dim) (Hugging Face's query_pre_attn_scalar: 144 vs 256).
    if (c.n_layer == 46) c.attn_scale = 1.0f / std::sqrt(static_cast<float>(c.n_embd / c.n_head));
  }
  if (c.arch == Architecture::Phi3 || c.arch == Architecture::Gemma2) {
    // llama.cpp assumes Gemma 2's window of 4096 when the key is absent.
    const int64_t fallback = c.arch == Architecture::Gemma2 ? 4096 : 0;
    TRY_ASSIGN(c.n_swa, f.get_int_or(a + "attention.sliding_window", fallback));
    INFERSCOPE_RETURN_IF_ERROR(check_range(f, a + "attention.sliding_window", c.n_swa, 0, int64_t(1) << 24));
  }
  return Status::ok();
}

// BERT: LayerNorm epsilon, bidirectional attention, the pooling of the token states, token
// types; no RoPE and no experts.
Status read_encoder_options(const gguf::File& f, const std::string& a, ModelConfig& c) {
  double eps = 0;
  TRY_ASSIGN(eps, f.get_float(a + "attention.layer_norm_epsilon"));
  if (!(eps > 0.0 && eps < 1.0)) {
    return Status::error(f.error_prefix() + "metadata key '" + a + "attention.layer_norm_epsilon' must be in (0, 1)");
  }
  c.norm_eps = static_cast<float>(eps);
  bool causal = false;
  TRY_ASSIGN(causal, f.get_bool_or(a + "attention.causal", false));
  if (causal) return Status::error(f.error_prefix() + "a causal BERT is not supported");
  c.causal = false;
  int64_t pooling = 0;
  TRY_ASSIGN(pooling, f.get_int_or(a + "pooling_type", 1));
  if (pooling < 1 || pooling > 3) {
    return Status::error(f.error_prefix() + "metadata key '" + a + "pooling_type' is " + std::to_string(pooling) +
                         " (supported: 1 mean, 2 cls, 3 last)");
  }
  c.pooling = static_cast<Pooling>(pooling);
  TRY_ASSIGN(c.n_token_types, f.get_int_or("tokenizer.ggml.token_type_count", 2));
  INFERSCOPE_RETURN_IF_ERROR(check_range(f, "tokenizer.ggml.token_type_count", c.n_token_types, 1, 1024));
  c.n_rot = 0;
  c.n_ctx_orig = c.n_ctx_train;
  c.attn_scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  c.ffn_activation = FfnActivation::GeluTanh;
  return Status::ok();
}

}  // namespace

const char* ffn_activation_name(FfnActivation activation) {
  switch (activation) {
    case FfnActivation::Silu: return "swiglu";
    case FfnActivation::GeluTanh: return "geglu";
    case FfnActivation::SwigluOai: return "swiglu-oai";
    case FfnActivation::Sigmoid: return "sigmoid-gate";
  }
  return "?";
}

const char* rope_scaling_name(RopeScaling scaling) {
  switch (scaling) {
    case RopeScaling::None: return "none";
    case RopeScaling::Linear: return "linear";
    case RopeScaling::Yarn: return "yarn";
    case RopeScaling::LongRope: return "longrope";
  }
  return "?";
}

const char* supported_architectures() {
  return "llama, qwen2, qwen2moe, qwen3, qwen3moe, phi3, gemma, gemma2, gemma3, smollm3, gpt-oss, mistral3, olmo2, "
         "qwen35, qwen35moe, qwen3next, gemma4, bert";
}

KvRowShape ModelConfig::kv_rows(bool with_mtp) const {
  const int64_t layers = n_layer + (with_mtp ? 1 : 0);
  KvRowShape rows{layers, n_embd_kv(), {}, 0, {}};
  if (is_hybrid() || n_kv_shared > 0) {
    for (int64_t l = 0; l < layers; ++l) rows.rowless_layer.push_back(stores_kv(l) ? 0 : 1);
  }
  if (head_dim_swa > 0) rows.n_embd_kv_window = head_dim_swa * n_head_kv;
  if (n_swa <= 0 || !causal) return rows;
  rows.window = n_swa;
  for (int64_t l = 0; l < layers; ++l) rows.window_layer.push_back(uses_sliding_window(l) ? 1 : 0);
  return rows;
}

Result<ModelConfig> ModelConfig::from_gguf(const gguf::File& f) {
  ModelConfig c;
  TRY_ASSIGN(c.arch_name, f.get_string("general.architecture"));
  TRY_ASSIGN(c.name, f.get_string_or("general.name", ""));
  const ArchEntry* entry = nullptr;
  for (const ArchEntry& e : kArchitectures) {
    if (c.arch_name == e.name) entry = &e;
  }
  if (entry == nullptr) {
    return Result<ModelConfig>::error(f.error_prefix() + "unsupported architecture '" + c.arch_name +
                                      "' (supported: " + supported_architectures() + ")");
  }
  c.arch = entry->arch;
  c.rope_layout = entry->rope;
  const std::string a = c.arch_name + ".";

  TRY_ASSIGN(c.n_ctx_train, f.get_int(a + "context_length"));
  TRY_ASSIGN(c.n_embd, f.get_int(a + "embedding_length"));
  TRY_ASSIGN(c.n_layer, f.get_int(a + "block_count"));
  const gguf::Value* ff = f.find(a + "feed_forward_length");
  const bool ff_per_layer = c.arch == Architecture::Gemma4 && ff != nullptr && ff->type == gguf::ValueType::ARRAY;
  if (!ff_per_layer) TRY_ASSIGN(c.n_ff, get_uniform_int(f, a + "feed_forward_length", 0, true));  // else read_layer_ff
  TRY_ASSIGN(c.n_head, get_uniform_int(f, a + "attention.head_count", 0, true));
  INFERSCOPE_RETURN_IF_ERROR(check_range(f, a + "embedding_length", c.n_embd, 1, 1 << 16));
  INFERSCOPE_RETURN_IF_ERROR(check_range(f, a + "block_count", c.n_layer, 1, 512));
  INFERSCOPE_RETURN_IF_ERROR(check_range(f, a + "attention.head_count", c.n_head, 1, 1024));
  INFERSCOPE_RETURN_IF_ERROR(check_range(f, a + "context_length", c.n_ctx_train, 1, int64_t(1) << 24));
  TRY_ASSIGN(c.n_head_kv, get_uniform_int(f, a + "attention.head_count_kv", c.n_head, false));
  INFERSCOPE_RETURN_IF_ERROR(check_range(f, a + "attention.head_count_kv", c.n_head_kv, 1, c.n_head));
  if (c.n_head % c.n_head_kv != 0) {
    return Result<ModelConfig>::error(f.error_prefix() + "head_count " + std::to_string(c.n_head) +
                                      " is not a multiple of head_count_kv " + std::to_string(c.n_head_kv));
  }
  TRY_ASSIGN(c.head_dim, f.get_int_or(a + "attention.key_length", c.n_embd / c.n_head));
  int64_t value_length = 0;
  TRY_ASSIGN(value_length, f.get_int_or(a + "attention.value_length", c.head_dim));
  if (value_length != c.head_dim) {
    return Result<ModelConfig>::error(f.error_prefix() + "attention.value_length " + std::to_string(value_length) +
                                      " differs from key_length " + std::to_string(c.head_dim) + " (not supported)");
  }
  INFERSCOPE_RETURN_IF_ERROR(check_range(f, a + "attention.key_length", c.head_dim, 2, 1024));
  if (c.head_dim % 2 != 0) return Result<ModelConfig>::error(f.error_prefix() + "head size must be even");

  if (c.is_encoder()) {
    INFERSCOPE_RETURN_IF_ERROR(read_encoder_options(f, a, c));
    const gguf::Value* tokens = f.find("tokenizer.ggml.tokens");
    TRY_ASSIGN(c.n_vocab, f.get_int_or(a + "vocab_size", tokens ? static_cast<int64_t>(tokens->array_size()) : 0));
    return c;
  }
  double eps = 0;
  TRY_ASSIGN(eps, f.get_float(a + "attention.layer_norm_rms_epsilon"));
  c.rms_eps = static_cast<float>(eps);
  double base = 0;
  TRY_ASSIGN(base, f.get_float_or(a + "rope.freq_base", 10000.0));
  c.rope_freq_base = static_cast<float>(base);
  TRY_ASSIGN(c.n_rot, f.get_int_or(a + "rope.dimension_count", c.head_dim));
  if (c.n_rot <= 0 || c.n_rot > c.head_dim || c.n_rot % 2 != 0) {
    return Result<ModelConfig>::error(f.error_prefix() + "rope.dimension_count " + std::to_string(c.n_rot) +
                                      " must be even and at most the head size " + std::to_string(c.head_dim));
  }
  INFERSCOPE_RETURN_IF_ERROR(read_rope_scaling(f, a, c));

  TRY_ASSIGN(c.n_expert, f.get_int_or(a + "expert_count", 0));
  TRY_ASSIGN(c.n_expert_used, f.get_int_or(a + "expert_used_count", 0));
  INFERSCOPE_RETURN_IF_ERROR(check_range(f, a + "expert_count", c.n_expert, 0, 256));
  INFERSCOPE_RETURN_IF_ERROR(check_range(f, a + "expert_used_count", c.n_expert_used, c.n_expert > 0 ? 1 : 0,
                                         c.n_expert));
  const bool shared_expert = c.arch == Architecture::Qwen35Moe || c.arch == Architecture::Qwen3Next;
  if ((c.arch == Architecture::Qwen2Moe || c.arch == Architecture::Qwen3Moe || shared_expert) && c.n_expert == 0) {
    return Result<ModelConfig>::error(f.error_prefix() + c.arch_name + " requires expert_count > 0");
  }
  c.has_qkv_bias = c.arch == Architecture::Qwen2 || c.arch == Architecture::Qwen2Moe;
  c.has_qk_norm = c.arch == Architecture::Qwen3 || c.arch == Architecture::Qwen3Moe;
  c.attn_scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  INFERSCOPE_RETURN_IF_ERROR(read_architecture_options(f, a, c));
  if (c.arch == Architecture::Qwen2Moe) {
    c.gating = ExpertGating::SoftmaxTopK;
    TRY_ASSIGN(c.n_ff_expert, f.get_int_or(a + "expert_feed_forward_length", c.n_ff / c.n_expert_used));
    TRY_ASSIGN(c.n_ff_shared, f.get_int_or(a + "expert_shared_feed_forward_length", c.n_ff));
  } else if (c.arch == Architecture::Qwen3Moe) {
    c.gating = ExpertGating::SoftmaxTopKRenormalized;
    TRY_ASSIGN(c.n_ff_expert, f.get_int_or(a + "expert_feed_forward_length", c.n_ff / c.n_expert_used));
  } else if (shared_expert) {  // qwen35moe, qwen3next: normalized top-k, and a gated shared expert
    c.gating = ExpertGating::SoftmaxTopKRenormalized;
    TRY_ASSIGN(c.n_ff_expert, f.get_int_or(a + "expert_feed_forward_length", c.n_ff / c.n_expert_used));
    TRY_ASSIGN(c.n_ff_shared, f.get_int_or(a + "expert_shared_feed_forward_length", c.n_ff));
  } else if (c.n_expert > 0 && c.arch != Architecture::GptOss) {  // Mixtral-style llama files
    c.gating = ExpertGating::SoftmaxTopKRenormalized;
    c.n_ff_expert = c.n_ff;
  }

  const gguf::Value* tokens = f.find("tokenizer.ggml.tokens");
  int64_t vocab_from_tokens = tokens ? static_cast<int64_t>(tokens->array_size()) : 0;
  TRY_ASSIGN(c.n_vocab, f.get_int_or(a + "vocab_size", vocab_from_tokens));
  return c;
}

}  // namespace inferscope
