// Writes random-weight GGUF files of the supported architectures (llama/mistral, mixtral, qwen2,
// qwen2moe, qwen3, qwen3moe, phi3, gemma, gemma2, gemma3, smollm3) for benchmarks at realistic sizes and tests of shapes no real small model has,
// with the tokenizer copied from an existing GGUF.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/model/quant_mix.h"

namespace inferscope {

struct RandomModelShape {
  int64_t n_embd = 2048;
  int64_t n_layer = 22;
  int64_t n_head = 32;
  int64_t n_head_kv = 4;
  int64_t n_ff = 5632;
  int64_t n_expert = 0;       // > 0 writes merged expert tensors (llama: Mixtral's; qwen2moe)
  int64_t n_expert_used = 0;
  int64_t n_ff_expert = 0;    // qwen2moe: a routed expert's FFN width (0: n_ff, as Mixtral's)
  int64_t n_ff_shared = 0;    // qwen2moe: the shared expert's FFN width
  int64_t n_ctx = 2048;
  bool tied_output = false;   // omit output.weight (use token_embd)
  // general.architecture: llama, qwen2, qwen2moe, qwen3, qwen3moe, phi3, gemma, gemma2, gemma3, smollm3,
  // gpt-oss, mistral3, olmo2, qwen35, qwen35moe, qwen3next, gemma4
  std::string arch = "llama";
  int64_t head_dim = 0;        // 0 = n_embd / n_head; else written as attention.key_length
  int64_t n_swa = 0;           // phi3 / gemma2 / gemma3 attention.sliding_window; 0 = none
  int64_t swa_period = 0;      // gemma3: attention.sliding_window_pattern when > 0 (absent: 6)
  float rope_freq_base_swa = 0.0f;  // gemma3: rope.freq_base_swa when > 0 (absent: 10000)
  float rope_freq_base = 10000.0f;
  float rms_eps = 1e-5f;
  float attn_softcap = 50.0f;  // gemma2 only
  float final_softcap = 30.0f; // gemma2 only
  // RoPE frequency scaling, written the way llama.cpp's converter writes it:
  //   "llama3":   rope_freqs.weight from Llama 3.1's rule (factor, low/high_freq_factor and the
  //               original context below), no scaling keys;
  //   "longrope": phi3's rope_factors_long/short.weight (random in [1, 4]) with
  //               rope.scaling.original_context_length and attn_factor;
  //   "yarn", "linear": rope.scaling.type and factor (yarn: and original_context_length).
  std::string rope_scaling;  // "" = none
  float rope_scaling_factor = 8.0f;
  float rope_low_freq_factor = 1.0f;   // llama3 only
  float rope_high_freq_factor = 4.0f;  // llama3 only
  int64_t rope_orig_ctx = 8192;        // original (pre-extension) training context
  float rope_yarn_log_mul = 0.0f;      // yarn only: rope.scaling.yarn_log_multiplier when > 0
  float attn_temp_scale = 0.0f;        // mistral3: attention.temperature_scale when > 0
  int64_t n_rot = 0;                   // rope.dimension_count; 0 = the head size
  // qwen35: Gated DeltaNet layers (ModelConfig::delta_net) but every full_attn_interval-th.
  int64_t ssm_k_heads = 0;
  int64_t ssm_v_heads = 0;
  int64_t ssm_head_dim = 0;
  int64_t ssm_conv_kernel = 4;
  int64_t full_attn_interval = 4;
  // qwen35, qwen35moe: a multi-token-prediction block after the layers (nextn_predict_layers 1:
  // a full-attention layer and the nextn.eh_proj, enorm and hnorm tensors), when true.
  bool mtp = false;
  // gemma4: the window layers (swa_period: every swa_period-th layer is full) have heads of
  // head_dim_swa; the full layers rotate rope_partial_full of their dims (the rest get rope_freqs
  // factors of 1e30); the last n_kv_shared layers store no KV and have FFNs twice as wide; each
  // layer takes a per-layer input of n_embd_per_layer; full layers but the last shared one have
  // no attn_v (V from K's projection) when k_eq_v.
  int64_t head_dim_swa = 0;
  int64_t n_kv_shared = 0;
  int64_t n_embd_per_layer = 0;
  float rope_partial_full = 0.25f;
  bool k_eq_v = false;
};

// Llama 3.1's per-pair frequency divisors ("llama3" rope_type): 1 for wavelengths shorter than
// orig_ctx / high_freq_factor, `factor` for those longer than orig_ctx / low_freq_factor, a
// smooth blend between. n_rot/2 values.
std::vector<float> llama3_rope_factors(int64_t n_rot, float freq_base, float factor, float low_freq_factor,
                                       float high_freq_factor, int64_t orig_ctx);

struct RandomModelSpec {
  RandomModelShape shape;
  QuantMix mix;             // matrix types (llama.cpp's per-tensor rules); norms and biases stay F32
  std::string vocab_path;   // GGUF whose tokenizer.* keys are copied (its vocab size is used)
  std::string name = "random";
  uint64_t seed = 1;
};

// Streams the file to `output_path` row by row (a 1.1B model never sits in memory).
Status write_random_model(const RandomModelSpec& spec, const std::string& output_path);

// "tinyllama-1.1b", "gemma2-2b", "phi3-tiny" and similar named shapes; false when unknown.
bool random_model_preset(const std::string& name, RandomModelShape* shape);

// The preset names, comma-separated, for help texts and errors.
std::string random_model_preset_names();

}  // namespace inferscope
