// The comparison workbench's engine (no Qt): runs a baseline and 1-3 candidate configurations
// (compare_config.h) on the same prompts in this process and measures, per configuration,
// speed (prefill and decode tokens/s, time to first token: median and spread over
// repetitions), memory by category (measured, and predicted before loading), KV bytes, prefix
// reuse, the replies, and quality against the baseline (quality_metrics.h), teacher-forced on
// the baseline's tokens.
//
// Order of work: load every configuration (one that cannot run is refused with the reason and
// the rest go on), then `reps` timing rounds that alternate the configurations (A B C, A B C...,
// so a change of the machine's state hits them alike), each round starting every configuration
// with an empty KV cache (prefix reuse within a round's prompts still counts), then quality:
// every configuration evaluates the baseline's tokens - each prompt followed by the baseline's
// reply - or, when a quality text is given, that text alone (its tokens in the baseline's
// vocabulary), and every position's next-token distribution is compared with the baseline's
// (like llama-perplexity --kl-divergence over a text). The perplexity is over the replies'
// tokens, or the text's. Sequences longer than the smallest context are cut to it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/compare/compare_config.h"
#include "engine/compare/quality_metrics.h"
#include "engine/model/memory_estimate.h"
#include "engine/runtime/generate_request.h"
#include "engine/sampling/sampling_params.h"

namespace inferscope {

struct ComparisonOptions {
  std::vector<CompareConfig> configs;  // [0] the baseline, then 1-3 candidates
  std::string default_model;           // for configurations without model=
  std::vector<std::string> prompts;    // at least one
  std::string quality_text;            // optional: quality over this text instead of the replies
  int reps = 3;                        // timing repetitions (>= 1)
  int32_t max_tokens = 64;
  SamplingParams sampling = greedy();  // greedy unless chosen; a sampled run shares `seed`
  // Each prompt as one user turn in each model's chat format (engine/chat/chat_prompt.h), with
  // its end-of-turn stop tokens; false: the prompts as plain completions.
  bool chat = false;

  static SamplingParams greedy();
};

// Median and range of one figure over the repetitions.
struct Spread {
  std::vector<double> samples;
  double median = 0, min = 0, max = 0;

  static Spread of(std::vector<double> samples);
};

struct ConfigResult {
  CompareConfig config;
  bool ran = false;              // false: refused (reason) or not reached (cancelled)
  std::string refusal;
  std::string backend_name;      // "cpu", "vulkan: <device>"
  std::string model_name;        // the file, "<file> as Q4_K_M" when requantized
  double load_ms = 0;
  Spread prefill_tokens_per_s, decode_tokens_per_s, ttft_ms;
  MemoryUsage memory;            // measured after the runs
  MemoryEstimate predicted;      // from the file before loading
  uint64_t kv_bytes_used = 0;    // of the KV cache: the blocks referenced or cached at the end
  int64_t prompt_tokens = 0;     // over the prompts of one round
  int64_t reused_tokens = 0;     // of those, served by the prefix cache
  std::vector<std::string> replies;  // one per prompt (the first round's)
  std::vector<int32_t> reply_token_counts;
  bool quality_comparable = false;
  std::string quality_note;      // why there is no quality figure (different vocabulary...)
  QualityFigures quality;
  std::string worst_token_text;  // the token after the largest KL, as text
};

struct ComparisonResult {
  ComparisonOptions options;
  std::vector<ConfigResult> configs;  // as options.configs, labels filled in
  bool cancelled = false;
};

struct ComparisonProgress {
  int done = 0, total = 0;
  std::string stage;  // "loading candidate 1", "round 2/3: baseline, prompt 1/4", "quality: ..."
};

struct ComparisonCallbacks {
  std::function<void(const ComparisonProgress&)> on_progress;
  const std::atomic<bool>* cancel = nullptr;  // set (any thread) to stop after the current token
};

// Fails only for bad options (no prompts, no or more than 4 configurations, reps < 1); a
// configuration that cannot run is a refused ConfigResult.
Result<ComparisonResult> run_comparison(const ComparisonOptions& options, const ComparisonCallbacks& callbacks = {});

// "baseline", "candidate 1", ... unless the configuration has a label.
std::string config_label(const CompareConfig& config, size_t index);

}  // namespace inferscope
