// Sizes (in elements) of the activation buffers a forward pass allocates on the CPU backend,
// for a batch of up to `batch` tokens; also the scratch memory estimate `inspect` shows before
// loading. GPU backends size their own buffers from the same fields.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/model/model_config.h"

namespace inferscope {

struct ScratchPlan {
  int64_t batch = 0, embd = 0, q = 0, kv = 0, ffn = 0, router = 0, routes = 0, scores = 0, rope = 0;
  int64_t expert_out = 0;    // [batch * n_expert_used][n_embd] (0 for dense models)
  size_t packed_region = 0;  // bytes of one packed-activation region (three are kept)

  static ScratchPlan for_model(const ModelConfig& config, int64_t n_ctx, int64_t max_batch, int n_threads);
  uint64_t total_bytes() const;
};

}  // namespace inferscope
