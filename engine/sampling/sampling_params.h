// SamplingParams: the knobs of the token sampler (engine/sampling/sampler.h), with llama.cpp's
// defaults and meanings so settings carry over from llama-cli / llama-server.
#pragma once

#include <cstdint>

#include "engine/core/status.h"

namespace inferscope {

struct SamplingParams {
  // seed value meaning "pick a random seed" (llama.cpp's LLAMA_DEFAULT_SEED).
  static constexpr uint64_t kRandomSeed = 0xFFFFFFFF;

  float temperature = 0.8f;      // 0 = greedy (argmax, ties -> lowest id)
  int32_t top_k = 40;            // 0 = disabled
  float top_p = 0.95f;           // 1 = disabled
  float min_p = 0.05f;           // 0 = disabled
  float repeat_penalty = 1.0f;   // 1 = disabled
  int32_t repeat_last_n = 64;    // window for all three penalties; 0 = disabled, -1 = every accepted token
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  uint64_t seed = kRandomSeed;

  // Ok, or an error naming the first out-of-range field and its allowed range.
  Status validate() const;
};

}  // namespace inferscope
