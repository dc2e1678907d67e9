// A model's architecture as a person reads it: labelled rows of what the configuration switches
// on (heads and their sizes, the FFN or experts, windows and their layers, q/k norms, sinks,
// RoPE and its per-layer variants), for `inspect` and the app's model information.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/model/model_config.h"

namespace inferscope {

// ("Attention", "16 heads of 128, 8 KV heads; window 512 on 5 of every 6 layers; q/k norms"), ...
std::vector<std::pair<std::string, std::string>> architecture_summary(const ModelConfig& config);

}  // namespace inferscope
