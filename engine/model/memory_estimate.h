// What loading a model and opening a session would cost, computed from the file alone: the
// weights as stored, the KV cache (of the chosen K and V types) at a context length, its
// sliding-window layers holding only their window pool (engine/kv/kv_layout.h), and the forward
// pass's activation buffers, and a hybrid model's recurrent states (engine/kv/recurrent_layout.h). Used by `inspect` and the desktop app's model info dialog.
#pragma once

#include <cstdint>
#include <string>

#include "engine/gguf/gguf_file.h"
#include "engine/kv/kv_layout.h"
#include "engine/model/model_config.h"
#include "engine/model/quant_mix.h"

namespace inferscope {

struct MemoryEstimate {
  int64_t n_ctx = 0;
  uint64_t weights_bytes = 0;
  uint64_t kv_cache_bytes = 0;  // one sequence slot
  KvTypes kv_types;
  // With a window pool: its layers, and the positions each of them holds (the others n_ctx).
  int64_t kv_window_layers = 0;
  int64_t kv_window_positions = 0;
  // A hybrid model: the layers with KV rows and those with a recurrent state, and the states'
  // bytes (the slot's and its checkpoints'); KV types apply to the KV layers only.
  int64_t kv_layers = 0;
  int64_t recurrent_layers = 0;
  int64_t shared_kv_layers = 0;  // gemma4: layers reading an earlier layer's KV rows, storing none
  uint64_t recurrent_bytes = 0;
  uint64_t scratch_bytes = 0;
  // A hybrid model's multi-token-prediction block (ModelConfig::n_nextn): what drafting with it
  // adds (ForwardOptions::mtp): its KV layer and the states a verification keeps per row; not
  // in total_bytes().
  int64_t mtp_layers = 0;
  uint64_t mtp_draft_bytes = 0;

  uint64_t total_bytes() const { return weights_bytes + kv_cache_bytes + recurrent_bytes + scratch_bytes; }
};

// n_ctx > 0; n_threads >= 1; max_batch as the session will use (SessionOptions::max_batch).
// weights_as: the weights requantized on load to that mix (requantized_model.h) instead of as
// stored; a mix the file cannot be converted to counts the weights as stored.
MemoryEstimate estimate_memory(const gguf::File& file, const ModelConfig& config, int64_t n_ctx, int n_threads,
                               int64_t max_batch = 256, KvTypes kv_types = {}, const QuantMix* weights_as = nullptr);

// "1.50 GiB": bytes as GiB with two decimals, for messages.
std::string format_gib(uint64_t bytes);

}  // namespace inferscope
