// A Session generates from one loaded model: tokenize, prefill, then a decode loop with a
// sampler or beam search, reporting each token as it is produced. Owns its KV cache and
// activation buffers; one generation at a time.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "engine/backend/backend_registry.h"
#include "engine/core/status.h"
#include "engine/core/thread_pool.h"
#include "engine/graph/forward_executor.h"
#include "engine/model/model.h"
#include "engine/runtime/batch_generation.h"
#include "engine/runtime/cache_policy.h"
#include "engine/runtime/draft_model.h"
#include "engine/runtime/generate_request.h"
#include "engine/runtime/generation_context.h"

namespace inferscope {

struct SessionOptions {
  int64_t n_ctx = 0;     // 0 = min(model's training context, 4096)
  int n_threads = 0;     // 0 = automatic: all cores, fewer while the machine is busy (ThreadAdaptation)
  int64_t max_batch = 256;
  KvTypes kv_types;       // storage types of the KV cache's K and V (f16 unless chosen)
  CachePolicy cache;      // paging, the prefix cache, the window (set_cache_policy changes it)
  BackendChoice backend;  // CPU unless chosen; a device of another backend runs the whole forward pass
  // The model's MTP block runs beside it, so replies can draft with it (DraftSource::Mtp;
  // ForwardOptions::mtp): one more KV layer, and the block's work on every position. A reply
  // that drafts with it turns it on too.
  bool mtp = false;
  std::function<void(double)> on_upload_progress;  // see ForwardOptions
};

class Session {
 public:
  static Result<std::unique_ptr<Session>> create(std::shared_ptr<const Model> model, const SessionOptions& options);

  // Runs one generation. The prompt's KV starts from the longest prefix the prefix cache holds
  // (GenerateResult::reused_tokens), the rest is prefilled. on_token returning false stops early.
  Result<GenerateResult> generate(const GenerateRequest& request,
                                  const std::function<bool(const TokenEvent&)>& on_token = {});

  // Generates for several sampled requests (beam width 1) together (a BatchGeneration that no
  // request joins later): request i runs in KV slot i, the prompts are prefilled in one forward
  // call and every decode step feeds all unfinished sequences in one (each weight read serves
  // them all). on_token(i, event) as generate's; returning false stops sequence i (stop reason
  // "cancelled"; its slot takes no more steps), cancel() stops them all.
  Result<std::vector<GenerateResult>> generate_batch(std::span<const GenerateRequest> requests,
                                                     const std::function<bool(size_t, const TokenEvent&)>& on_token = {});

  // Evaluates tokens from an empty context and returns every position's logits
  // ([tokens.size()][n_vocab]); used by perplexity and quality comparisons.
  Status evaluate(std::span<const int32_t> tokens, std::vector<float>& logits);

  // Makes room for n sequences (KV slots) in the executor: slots only grow (see ensure_slots).
  Status reserve_sequences(int n) { return ensure_slots(n); }
  // A batch of up to `capacity` sampled sequences on this session (BatchGeneration): the
  // session must outlive it and run nothing else meanwhile.
  Result<std::unique_ptr<BatchGeneration>> start_batch(int capacity);
  // What a draft model for this session runs beside (DraftModel::create).
  DraftTarget draft_target();

  // Forgets the context and every cached prefix: the next prompt is prefilled whole (timing
  // repetitions that must all start cold).
  void clear_cache() { forward_->clear_with_prefixes(); }

  // Asks a running generate() to stop after the current token (any thread).
  void cancel() { cancelled_.store(true); }

  const Model& model() const { return *model_; }
  const std::shared_ptr<const Model>& shared_model() const { return model_; }
  ThreadPool& pool() { return *pool_; }
  ForwardExecutor& executor() { return *forward_; }
  const SessionOptions& options() const { return options_; }
  // The threads setting it was made with, for what runs beside it (an embedder): 0 when
  // automatic (options().n_threads is then the pool's size), else the fixed count.
  int thread_setting() const { return pool_->adaptive() ? 0 : options_.n_threads; }
  int64_t n_ctx() const { return forward_->n_ctx(); }
  MemoryUsage memory() const { return generation_context().memory(); }

  // Re-creates the KV cache with other K/V types; the model stays loaded (a GPU backend copies
  // its weights to the device again). The context is emptied. On failure (a type the backend
  // cannot run, no memory) the session keeps its previous types, and the error says why.
  Status set_kv_types(KvTypes types);
  // The same for the cache policy (block size, budget, prefix cache, window, context shift).
  Status set_cache_policy(const CachePolicy& policy);

 private:
  Session() = default;
  GenerationContext generation_context() const;
  Status ensure_slots(int n_slots);
  Status recreate_executor(const SessionOptions& changed);
  Result<std::unique_ptr<ForwardExecutor>> create_executor(int n_slots);
  Status enable_mtp();
  Result<GenerateResult> generate_beam(const GenerateRequest& request,
                                       const std::function<bool(const TokenEvent&)>& on_token);

  std::shared_ptr<const Model> model_;
  SessionOptions options_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<ForwardExecutor> forward_;
  std::atomic<bool> cancelled_{false};
};

}  // namespace inferscope
