// The forward pass, once for every backend: what a Session drives (ForwardExecutor) over the
// ops of any backend (engine/backend/backend_ops.h). It checks the input, cuts each call into
// chunks (ChunkBuilder), keeps the sequences' KV blocks (KvSlots), runs each chunk's graph
// (ChunkGraph: the decoder's or the encoder's) and hands back the logits. A backend only runs
// (or records) the ops.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/backend/backend_ops.h"
#include "engine/backend/backend_registry.h"
#include "engine/core/status.h"
#include "engine/graph/chunk_builder.h"
#include "engine/graph/chunk_graph.h"
#include "engine/graph/forward_executor.h"
#include "engine/graph/kv_slots.h"
#include "engine/graph/recurrent_states.h"
#include "engine/model/model.h"

namespace inferscope {

class ThreadPool;

struct ForwardOptions {
  int64_t n_ctx = 0;        // context length; 0 = the model's training context
  int n_slots = 1;          // sequences kept in the KV cache (beam width)
  int64_t max_batch = 256;  // tokens per forward call chunk
  KvTypes kv_types;         // storage types of the KV cache's K and V rows
  int32_t kv_block_size = kDefaultKvBlockSize;  // positions per KV block (check_kv_block_size)
  // KV memory beyond the slots' contexts for blocks the prefix cache keeps (--cache-budget);
  // with none, cached blocks live in the blocks the slots do not use.
  uint64_t kv_cache_budget_bytes = 0;
  // StreamingLLM's KV policy (--kv-window, --kv-sinks): with kv_window > 0 a query sees the first
  // kv_sinks positions and the last kv_window, and blocks nothing sees any more leave the cache
  // (the later ones move down, keys re-rotated), so a sequence runs past n_ctx in constant KV
  // memory. Context shift keeps the kv_sinks positions' blocks too.
  int64_t kv_window = 0;
  int64_t kv_sinks = 4;
  ThreadPool* host_threads = nullptr;  // the session's pool (outlives the pass): the CPU runs ops on it
  // GPU backends: called with the fraction of the weights copied to the device (0..1,
  // non-decreasing), on the creating thread.
  std::function<void(double)> on_upload_progress;
  // A decoder's forward calls output its normalized last hidden states ([n_embd] rows:
  // rmsnorm(x) before the output head) instead of logits: the chat model as an embedding model.
  // Encoders always output their final token states.
  bool hidden_states = false;
  // A hybrid model with an MTP block (ModelConfig::has_mtp; qwen35, qwen35moe) runs it on every
  // position too, its KV rows as one more layer of the cache, so that it can draft for the
  // model (draft_mtp).
  bool mtp = false;
};

class ForwardPass : public ForwardExecutor {
 public:
  // The forward pass of `model` on a device of a backend (loaded through the registry).
  static Result<std::unique_ptr<ForwardExecutor>> open(std::shared_ptr<const Model> model, const BackendChoice& backend,
                                                       const ForwardOptions& options);
  // Checks that the model fits the backend's device (naming what does not), uploads the
  // weights, allocates the KV cache and activations, and (on recording backends) compiles
  // every pipeline by recording a chunk.
  static Result<std::unique_ptr<ForwardPass>> create(std::shared_ptr<const Model> model,
                                                     std::unique_ptr<BackendOps> ops, const ForwardOptions& options);

  Status forward(int slot, std::span<const int32_t> tokens, bool all_logits, float* logits) override;
  Status verify(int slot, std::span<const int32_t> tokens, float* logits) override;
  Status forward_batch(std::span<const SequenceTokens> sequences) override;
  Status forward_layers(int slot, std::span<const int32_t> tokens, int64_t n_layers, float* logits) override;
  Status draft_mtp(int slot, int32_t token, bool first, float* logits) override;
  bool drafts_mtp() const override { return mtp_; }
  Status shift_context(int slot) override;

  int64_t output_width() const override { return plan_.output_width; }
  int64_t n_ctx() const override { return plan_.n_ctx; }
  int n_slots() const override { return slots_->n_slots(); }
  int64_t kv_length(int slot) const override;
  void clear() override;
  void clear_with_prefixes() override;
  // A hybrid model's slot goes back through a checkpoint of its recurrent state
  // (engine/graph/recurrent_states.h): the tokens after it are replayed at its next call.
  void truncate(int slot, int64_t length) override;
  // A hybrid model reuses what its slot holds, or a prefix that ends at a checkpoint.
  int64_t reuse_prefix(int slot, std::span<const int32_t> tokens) override;
  Status reorder(std::span<const int32_t> parents) override;
  ExecutorMemory memory() const override { return ops_->memory(); }
  KvBlockStats kv_blocks() const override { return slots_->stats(); }
  ExecutorCounters counters() const override;
  OpProfile& profile() override { return profile_; }
  std::string backend_name() const override { return ops_->name(); }

  const Model& model() const { return *model_; }
  const ForwardPlan& plan() const { return plan_; }

 private:
  ForwardPass() = default;
  static Status check_mtp(const Model& model);
  Status fit_check();
  Status warm_up();
  Status check_input(std::span<const SequenceTokens> sequences, int64_t n_layers);
  Status check_encoder_input(int slot, size_t n, bool all_logits) const;
  Status run_sequences(std::span<PendingSequence> pending, float* all_logits, CallShape shape);
  Status run_chunk(const Chunk& chunk, std::span<const int32_t> tokens);
  // A hybrid model's slot given again the tokens it went back over (RecurrentStates::replay),
  // each row as a decode step computes it.
  Status catch_up(int slot);
  Status forward_prompt_with_checkpoint(int slot, std::span<const int32_t> tokens, float* logits);
  int64_t reuse_hybrid_prefix(int slot, std::span<const int32_t> tokens);
  uint64_t seed_for_prefixes() const;

  std::shared_ptr<const Model> model_;
  std::unique_ptr<BackendOps> ops_;
  ForwardPlan plan_;
  std::unique_ptr<KvSlots> slots_;
  std::unique_ptr<RecurrentStates> states_;  // a hybrid model's; null otherwise
  std::unique_ptr<ChunkBuilder> chunks_;
  std::unique_ptr<ChunkGraph> graph_;
  OpProfile profile_;
  uint64_t forward_calls_ = 0;
  bool mtp_ = false;
  // Per slot: the first position an MTP draft appended (its rows hold the block's KV only), or
  // -1; truncate() back to it leaves the recurrent state alone.
  std::vector<int64_t> mtp_draft_from_;
  // The last verification's row states (plan.recurrent.n_row_states): its slot (-1: none held),
  // the position of its first row, and how many rows have one.
  struct RowStates {
    int slot = -1;
    int64_t pos0 = 0;
    int64_t rows = 0;
  };
  RowStates row_states_;
  bool restore_row_state(int slot, int64_t length);
};

}  // namespace inferscope
