// The forward pass, once for every backend: straight-line code over the ops of
// engine/backend/backend_ops.h, for a batch of tokens of one sequence slot. Input checks,
// chunking, the slots' lengths, the fit check, the scratch plan, profiling labels and logits
// are handled here; a backend only runs (or records) the ops.
//
// The llama-family decoders:
//   x = embed(tokens) (* sqrt(n_embd) for gemma)
//   for each layer:  h = rmsnorm(x) ; q,k,v = h Wq, h Wk, h Wv (+ biases) ; rope(q, k)
//                    x += [postnorm] attention(q, K, V) Wo   (causal or sliding window;
//                                                             gemma2 soft-caps the scores)
//                    h = rmsnorm(x) ; x += [postnorm] ffn(h)  (SwiGLU or GeGLU, or a mixture
//                                                              of SwiGLU experts)
//   logits = rmsnorm(x) Wout (gemma2: soft-capped); with hidden_states: rmsnorm(x) itself
//   (a self-draft, forward_layers: the same after the first L layers only)
// BERT's encoder (a whole sequence in one chunk, its output the final token states):
//   x = layernorm(embed(tokens) + position rows + token-type row 0)
//   for each layer:  q,k,v = x Wq + bq, ... ; x = layernorm(x + attention(q, K, V) Wo + bo)
//                    x = layernorm(x + gelu(x Wup + b_up) Wdown + b_down)
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "engine/backend/backend_ops.h"
#include "engine/backend/forward_executor.h"
#include "engine/core/status.h"
#include "engine/model/model.h"
#include "engine/model/op_profile.h"

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
};

class ForwardPass : public ForwardExecutor {
 public:
  // Checks that the model fits the backend's device (naming what does not), uploads the
  // weights, allocates the KV cache and activations, and (on recording backends) compiles
  // every pipeline by recording a chunk.
  static Result<std::unique_ptr<ForwardPass>> create(std::shared_ptr<const Model> model,
                                                     std::unique_ptr<BackendOps> ops, const ForwardOptions& options);

  Status forward(int slot, std::span<const int32_t> tokens, bool all_logits, float* logits) override;
  Status verify(int slot, std::span<const int32_t> tokens, float* logits) override;
  Status forward_batch(std::span<const SequenceTokens> sequences) override;
  Status forward_layers(int slot, std::span<const int32_t> tokens, int64_t n_layers, float* logits) override;
  Status shift_context(int slot) override;

  int64_t output_width() const override { return plan_.output_width; }
  int64_t n_ctx() const override { return plan_.n_ctx; }
  int n_slots() const override { return static_cast<int>(tables_.size()); }
  int64_t kv_length(int slot) const override { return tables_[static_cast<size_t>(slot)].length(); }
  void clear() override;
  void clear_with_prefixes() override;
  void truncate(int slot, int64_t length) override;
  int64_t reuse_prefix(int slot, std::span<const int32_t> tokens) override;
  Status reorder(std::span<const int32_t> parents) override;
  ExecutorMemory memory() const override { return ops_->memory(); }
  KvBlockStats kv_blocks() const override;
  ExecutorCounters counters() const override;
  OpProfile& profile() override { return profile_; }
  std::string backend_name() const override { return ops_->name(); }

  const Model& model() const { return *model_; }
  const ForwardPlan& plan() const { return plan_; }
  const BlockPool& blocks() const { return *pool_; }

 private:
  ForwardPass() = default;
  Status fit_check();
  Status set_kv_window(int64_t window, int64_t sinks);
  Status warm_up();
  struct Pending;
  // How a forward call's chunks run: through the first n_layers layers, batch-invariant or not
  // (Chunk::n_layers, Chunk::batch_invariant).
  struct CallShape {
    int64_t n_layers = 0;
    bool batch_invariant = false;
  };
  Status check_input(std::span<const SequenceTokens> sequences, int64_t n_layers) const;
  Status check_encoder_input(int slot, size_t n, bool all_logits) const;
  Status run_sequences(std::span<Pending> pending, float* all_logits, CallShape shape);
  Status next_chunk(std::span<Pending> pending, float* all_logits, CallShape shape);
  void commit_rows(Pending& p, int64_t n_layers);
  Status slide_window(int slot, int64_t n);
  Status drop_blocks(int slot, size_t first, size_t count);
  int64_t sink_blocks() const;
  AttentionShape attention_shape(int64_t layer) const;
  Status run_chunk(const Chunk& chunk, std::span<const int32_t> tokens);
  Status run_encoder_chunk(const Chunk& chunk, std::span<const int32_t> tokens);
  Status encoder_layer(const LayerWeights& l, int64_t layer, const Chunk& chunk);
  Status attention_block(const LayerWeights& l, int64_t layer, const Chunk& chunk);
  Status ffn_block(const LayerWeights& l, int64_t layer, int64_t n);
  Status moe_ffn(const LayerWeights& l, int64_t layer, int64_t n);
  Status logits(const Chunk& chunk);
  Status make_writable(BlockTable& table, int64_t n);
  uint64_t seed_for_prefixes() const;

  std::shared_ptr<const Model> model_;
  std::unique_ptr<BackendOps> ops_;
  ForwardPlan plan_;
  std::unique_ptr<BlockPool> pool_;  // which KV block is whose (the backend holds the rows)
  std::vector<BlockTable> tables_;   // per slot: its blocks and the positions it holds
  std::vector<std::vector<int32_t>> tokens_;  // per slot: the tokens of its positions
  // Per slot: blocks left the cache (window, context shift), so its later blocks' contents no
  // longer match a cold prefill of its tokens and are not offered to the prefix cache.
  std::vector<bool> shifted_;
  // Per slot: the positions a self-draft appended (forward_layers), from `from` on, hold the KV
  // rows of their first `layers` layers only; layers == 0: none do.
  struct ShallowRows {
    int64_t from = 0;
    int64_t layers = 0;
  };
  std::vector<ShallowRows> shallow_;
  int64_t kv_window_ = 0, kv_sinks_ = 0;
  // A chunk's rows, spans and (for several sequences) logits before they go to each sequence.
  std::vector<int32_t> chunk_tokens_;
  std::vector<ChunkSpan> chunk_spans_;
  std::vector<float> chunk_logits_;
  std::vector<int32_t> chunk_positions_, chunk_token_types_;  // an encoder chunk's rows
  bool hidden_states_ = false;  // a decoder outputs rmsnorm(x) rows (ForwardOptions::hidden_states)
  uint64_t prefix_seed_ = 0;  // what cached blocks' contents depend on besides their tokens
  OpProfile profile_;
  uint64_t forward_calls_ = 0;
};

}  // namespace inferscope
