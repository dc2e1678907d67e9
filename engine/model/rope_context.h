// RoPE for a session of n_ctx tokens: the file's linear/YaRN scaling and attention factor, and
// its frequency factors (rope_freqs; else LongRoPE's long factors when n_ctx exceeds
// n_ctx_orig, short ones otherwise, as llama.cpp chooses). Points into `weights`.
#pragma once

#include <cstdint>

#include "engine/model/model_config.h"
#include "engine/model/model_weights.h"
#include "kernels/formats/rope_params.h"

namespace inferscope {

kernels::RopeParams rope_params_for_context(const ModelConfig& config, const ModelWeights& weights, int64_t n_ctx);

// The sliding-window layers' RoPE (config.has_swa_rope): `full` with the window layers' own base
// and scale (llama.cpp changes only those two for them), and no frequency factors where they
// are the full layers' only (gemma4); `full` itself otherwise.
kernels::RopeParams rope_params_for_window_layers(const ModelConfig& config, const kernels::RopeParams& full);

}  // namespace inferscope
