// Hyperparameters of a llama-family model, read from GGUF metadata (GGUF-FORMATS.md 5.2-5.3).
#pragma once

#include <cstdint>
#include <string>

#include "engine/core/status.h"
#include "engine/gguf/gguf_file.h"

namespace inferscope {

enum class Architecture { Llama, Qwen2, Qwen2Moe };

// NORM rotates adjacent pairs (2i, 2i+1); NEOX rotates (i, i + n_rot/2). Fixed per architecture.
enum class RopeLayout { Normal, Neox };

// Expert routing: Mixtral renormalizes the top-k softmax weights; qwen2moe uses them as they are.
enum class ExpertGating { None, SoftmaxTopKRenormalized, SoftmaxTopK };

struct ModelConfig {
  std::string arch_name;  // general.architecture
  std::string name;       // general.name
  Architecture arch = Architecture::Llama;

  int64_t n_vocab = 0;
  int64_t n_ctx_train = 0;
  int64_t n_embd = 0;
  int64_t n_layer = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;  // key/value head size
  int64_t n_ff = 0;      // dense FFN width (or per-expert width for Mixtral-style files)

  int64_t n_expert = 0;
  int64_t n_expert_used = 0;
  int64_t n_ff_expert = 0;  // per-expert FFN width
  int64_t n_ff_shared = 0;  // shared-expert FFN width (qwen2moe), 0 when none
  ExpertGating gating = ExpertGating::None;

  float rms_eps = 1e-5f;
  float rope_freq_base = 10000.0f;
  float rope_freq_scale = 1.0f;  // 1 / rope.scaling.factor (linear scaling)
  int64_t n_rot = 0;
  RopeLayout rope_layout = RopeLayout::Normal;

  bool has_qkv_bias = false;

  int64_t n_embd_kv() const { return head_dim * n_head_kv; }
  int64_t n_embd_q() const { return head_dim * n_head; }
  bool is_moe() const { return n_expert > 0; }

  static Result<ModelConfig> from_gguf(const gguf::File& file);
};

// Architectures this engine runs, for error messages: "llama, qwen2, qwen2moe".
const char* supported_architectures();

}  // namespace inferscope
