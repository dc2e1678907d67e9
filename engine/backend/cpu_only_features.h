// What of a model only the CPU backend runs so far, for the GPU backends' supports(): Gemma 4's
// per-layer inputs, its shared-KV layers and its window layers' heads of another size.
#pragma once

#include <string>

#include "engine/core/status.h"
#include "engine/model/model_config.h"

namespace inferscope {

inline Status check_not_cpu_only(const ModelConfig& c, const std::string& backend) {
  if (c.n_embd_per_layer > 0 || c.n_kv_shared > 0 || c.head_dim_swa > 0 || c.has_v_norm) {
    return Status::error(backend + ": Gemma 4's layers (per-layer inputs, shared KV, window heads of their own size) "
                         "run on the CPU backend only so far");
  }
  return Status::ok();
}

}  // namespace inferscope
