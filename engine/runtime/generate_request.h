// What one generation asks for, and what it reports back (events and the final result).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/graph/forward_executor.h"
#include "engine/kv/kv_layout.h"
#include "engine/sampling/sampling_params.h"

namespace inferscope {

class DraftModel;

// Where speculative decoding's drafts come from.
enum class DraftSource {
  None,
  Lookup,     // the context's own continuation of its last tokens (engine/sampling/lookup_draft.h)
  Model,      // a smaller model with the same vocabulary, greedy (DraftOptions::model)
  LayerSkip,  // the target model itself through its first DraftOptions::layers layers, greedy
  Mtp,        // the model's own multi-token-prediction block, greedy (a session made with
              // SessionOptions::mtp: ForwardExecutor::draft_mtp)
};

// Speculative decoding (BatchGeneration, while the sequence runs alone): the target model
// verifies a drafted continuation in one forward call and keeps the part it would have chosen
// itself. The output is the output without it: the same tokens, greedy or sampled with the same
// seed (docs/SPECULATIVE.md).
struct DraftOptions {
  DraftSource source = DraftSource::None;
  int32_t max_tokens = 8;  // the longest draft (>= 1); the length adapts to how much is accepted
  std::shared_ptr<DraftModel> model;  // Model: made for the session that generates (DraftModel::create)
  int32_t layers = 0;                 // LayerSkip: 1 .. the model's layers
};

struct GenerateRequest {
  std::string prompt;
  bool add_special = true;     // BOS (etc.) as the model asks, like llama.cpp's default
  bool parse_special = false;  // special-token texts in the prompt stay plain text
  int32_t max_tokens = 128;
  SamplingParams sampling;
  int32_t beam_width = 1;    // > 1 selects beam search (deterministic)
  int32_t top_logprobs = 0;  // K most likely tokens per step under the raw distribution
  DraftOptions draft;  // speculative decoding (off unless a source is chosen)
  // Tokens that end the reply besides the vocabulary's end-of-generation tokens (EOS, EOT, ...),
  // e.g. ChatTemplate::stop_token_ids(). The stop token is not part of the output.
  std::vector<int32_t> stop_token_ids;
};

struct TokenLogprob {
  int32_t id;
  float logprob;  // natural log
};

// One generated token as it is produced.
struct TokenEvent {
  int32_t id = 0;
  std::string text;  // newly completed UTF-8 text (may be empty mid-character)
  std::vector<TokenLogprob> top_logprobs;
};

struct GenerateTimings {
  double ttft_ms = 0;           // request start to first generated token
  double prefill_ms = 0;
  double decode_ms = 0;         // after the first token
  double prefill_tokens_per_s = 0;  // over the tokens prefilled (not the reused ones)
  double decode_tokens_per_s = 0;
  // Time-to-first-token the prefix cache saved: the reused tokens at this request's prefill
  // rate (an estimate; 0 when nothing was reused or nothing prefilled).
  double ttft_saved_ms = 0;
};

struct MemoryUsage {
  uint64_t weights_bytes = 0;          // in host memory (the file's tensors)
  uint64_t device_weights_bytes = 0;   // copied to a GPU backend's device memory
  uint64_t kv_cache_bytes = 0;
  uint64_t recurrent_bytes = 0;        // a hybrid model's recurrent states (ExecutorMemory)
  KvTypes kv_types;                    // what the KV cache stores
  uint64_t scratch_bytes = 0;
  uint64_t peak_rss_bytes = 0;  // whole process, as the OS counts it
  KvBlockStats kv_blocks;       // the paged KV pool: blocks in use, cached, free; prefix hits
  // Speculative decoding's draft model (DraftModel::memory_bytes): its weights, KV cache and
  // scratch; 0 without one. Not in the figures above.
  uint64_t draft_model_bytes = 0;
};

struct GenerateResult {
  std::vector<int32_t> prompt_token_ids;
  std::vector<int32_t> token_ids;
  std::string text;
  // "eos" (the EOS token), "end_of_turn" (another end-of-generation or stop token),
  // "max_tokens", "context_full", "cancelled"
  std::string stop_reason;
  std::vector<std::vector<TokenLogprob>> steps;  // when top_logprobs > 0
  int64_t reused_tokens = 0;  // prompt tokens whose KV the prefix cache had (not prefilled)
  int32_t context_shifts = 0;  // times a full context dropped its older half (--context-shift)
  int64_t draft_tokens = 0;     // speculative decoding: tokens drafted
  int64_t accepted_tokens = 0;  // and of those, the ones the model's own choice confirmed
  GenerateTimings timings;
  MemoryUsage memory;
};

}  // namespace inferscope
