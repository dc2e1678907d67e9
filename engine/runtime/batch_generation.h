// Sampled generations (beam width 1) that run together and join or leave between steps:
// continuous batching. Each sequence takes a free KV slot of the session. One step prefills the
// prompts added since the last step and feeds every running sequence its last token, all in one
// forward call (each weight read serves them all); then each sequence's next token is sampled
// and reported. A finished sequence reports its result and frees its slot for the next request
// at once, while the others go on. A sequence running alone with a speculative draft
// (GenerateRequest::draft) takes speculative steps instead: its draft verified in one call
// (ForwardExecutor::verify); drafts rejected whole again and again pause drafting for a while.
// Not thread-safe: one thread adds and steps. The executor runs nothing else meanwhile.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "engine/core/status.h"
#include "engine/runtime/generate_request.h"
#include "engine/runtime/generation_context.h"

namespace inferscope {

class BatchGeneration {
 public:
  using OnToken = std::function<bool(const TokenEvent&)>;  // false stops that sequence ("cancelled")
  using OnDone = std::function<void(Result<GenerateResult>)>;  // exactly once per sequence added

  // Runs in KV slots 0 .. capacity - 1 of the context's executor (which has them, and outlives
  // the batch: Session::start_batch makes both).
  static Result<std::unique_ptr<BatchGeneration>> create(const GenerationContext& context, int capacity);
  // Ends the sequences still running as cancel_all() does.
  ~BatchGeneration();
  BatchGeneration(const BatchGeneration&) = delete;
  BatchGeneration& operator=(const BatchGeneration&) = delete;

  // Takes `request` into the lowest free slot; it is prefilled at the next step (from the
  // longest prefix the prefix cache holds, when the session keeps one). Fails, taking nothing
  // and calling nothing, on an invalid request, an empty prompt, one longer than the context
  // (without a KV window), or when every slot is taken.
  Status add(const GenerateRequest& request, OnToken on_token, OnDone on_done);

  // One forward call for every sequence, then one token sampled for each (see above). A failed
  // forward call ends every sequence with its error, which step() returns too.
  Status step();

  // Ends every sequence now with what it has generated (stop reason "cancelled").
  void cancel_all();

  int active() const { return static_cast<int>(sequences_.size()); }
  int capacity() const { return capacity_; }

 private:
  struct Sequence;
  BatchGeneration(const GenerationContext& context, int capacity);
  Status sample(Sequence& seq);
  Result<std::vector<int32_t>> propose_draft(Sequence& seq);
  Result<std::vector<int32_t>> self_draft(const Sequence& seq, int64_t length);
  Result<std::vector<int32_t>> mtp_draft(const Sequence& seq, int64_t length);
  using DraftStep = std::function<Status(int32_t token, bool first)>;
  Result<std::vector<int32_t>> draft_in_slot(const Sequence& seq, int64_t length, const DraftStep& step);
  Status speculative_step(Sequence& seq, std::span<const int32_t> draft, std::chrono::steady_clock::time_point started);
  static void pause_failing_drafts(Sequence& seq, size_t accepted);
  void finish(Sequence& seq);
  void report(Sequence& seq, Result<GenerateResult> outcome);
  void end_finished();
  void fail_all(const Status& error);

  GenerationContext context_;
  const int capacity_;
  std::vector<std::unique_ptr<Sequence>> sequences_;  // in the order they were added
  std::vector<int> free_slots_;                        // highest first: the lowest is taken next
  std::vector<float> verify_logits_;                   // a speculative step's [1 + draft][n_vocab], reused
  std::vector<float> draft_logits_;                    // a self-draft's or MTP draft's [n_vocab], reused
};

}  // namespace inferscope
