// A smaller model with the target model's vocabulary that drafts tokens for speculative decoding
// (DraftSource::Model): greedily, through a forward pass and KV cache of its own, on the target
// session's backend and threads. Its cache follows the contexts it is asked to continue: it
// keeps the longest prefix it shares with the new context (so the positions of a rejected draft
// leave it) and is fed only the tokens after that. One generation at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/backend/backend_registry.h"
#include "engine/core/status.h"
#include "engine/graph/forward_executor.h"
#include "engine/kv/kv_layout.h"
#include "engine/model/model.h"

namespace inferscope {

class ThreadPool;

// What a draft model runs beside (Session::draft_target): the target model, and the session's
// backend, threads, context length, batch and KV types, which the draft model takes too.
struct DraftTarget {
  const Model* model = nullptr;
  BackendChoice backend;
  ThreadPool* threads = nullptr;
  int64_t n_ctx = 0;
  int64_t max_batch = 256;
  KvTypes kv_types;
};

// OK when `draft` can draft for `target`: the same number of tokens with the same texts.
// Otherwise the error names both files and the first difference.
Status check_draft_vocabulary(const Model& draft, const Model& target);

class DraftModel {
 public:
  // Fails when the vocabularies differ (check_draft_vocabulary) or the forward pass cannot be
  // made. Its context length is the session's. The target's session must outlive the draft
  // model, which runs on the session's threads.
  static Result<std::shared_ptr<DraftModel>> create(std::shared_ptr<const Model> draft, const DraftTarget& target);

  // Up to max_tokens (>= 1) tokens the model predicts greedily after `context` (a sequence's
  // tokens from position 0: its first prompt_length tokens the prompt, prefilled by the target,
  // the rest decoded), ending early at an end-of-generation token; fewer when its context has
  // no room for them, none when the context does not fit.
  Result<std::vector<int32_t>> draft(std::span<const int32_t> context, int64_t prompt_length, int64_t max_tokens);

  const Model& model() const { return *model_; }
  // What drafting holds: the model's weights (and their device copy), its KV cache and scratch.
  uint64_t memory_bytes() const;
  // Positions its KV cache holds: the last context asked about and the draft after it, less
  // the draft's last token.
  int64_t kv_length() const { return executor_->kv_length(0); }

 private:
  DraftModel(std::shared_ptr<const Model> model, std::unique_ptr<ForwardExecutor> executor);
  Status feed_tokens(std::span<const int32_t> prompt, std::span<const int32_t> decoded);

  std::shared_ptr<const Model> model_;
  std::unique_ptr<ForwardExecutor> executor_;  // one slot
  std::vector<int32_t> held_;                  // the tokens of its KV positions
  std::vector<float> logits_;                  // [n_vocab]
  std::vector<float> fed_logits_;              // [tokens fed][n_vocab]: feed_tokens' scratch
};

}  // namespace inferscope
