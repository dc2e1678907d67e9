// A comparison as JSON: what `inferscope-cli compare --json` prints, what the app exports, and
// (split in two) what the database keeps. Reading it back gives the comparison again (the app's
// history reopens past runs from it).
//
//   { "default_model": ..., "prompts": [...], "quality_text": ..., "reps": N, "max_tokens": N, "chat": B,
//     "sampling": {"temperature": T, "seed": S}, "cancelled": false,
//     "configurations": [ { "label", "config" (key=value text), "ran", "refusal", "backend",
//        "model", "load_ms", "prefill_tokens_per_s", "decode_tokens_per_s", "ttft_ms" (medians),
//        "prefill_tokens_per_s_spread": {"min", "max", "samples"} (also decode_, ttft_),
//        "memory": {"weights_bytes", "device_weights_bytes", "kv_cache_bytes", "scratch_bytes",
//                   "total_bytes"},
//        "predicted_memory": {"weights_bytes", "kv_cache_bytes", "scratch_bytes", "total_bytes"},
//        "kv_bytes_used", "prompt_tokens", "reused_tokens", "replies", "reply_tokens",
//        "mean_kl", "top1_agreement", "max_kl", "perplexity" (null when not comparable),
//        "max_kl_at": {"sequence", "position", "token"}, "quality_positions",
//        "perplexity_positions", "kl_per_position", "quality_note" } ] }
#pragma once

#include <string>
#include <string_view>

#include "engine/compare/comparison.h"
#include "engine/core/status.h"

namespace inferscope {

std::string comparison_json(const ComparisonResult& result, int indent = -1);
Result<ComparisonResult> comparison_from_json(std::string_view json);

// The database's halves: what was asked (options) and what was measured (configurations).
struct ComparisonJsonParts {
  std::string config_json;
  std::string metrics_json;
};
ComparisonJsonParts comparison_json_parts(const ComparisonResult& result);
Result<ComparisonResult> comparison_from_json_parts(std::string_view config_json, std::string_view metrics_json);

}  // namespace inferscope
