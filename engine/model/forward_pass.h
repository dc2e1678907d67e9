// The llama-family forward pass over a batch of tokens of one sequence slot, with its own
// KV cache and activation buffers (allocated once; no allocation while generating).
//
//   x = embed(tokens) (* sqrt(n_embd) for gemma)
//   for each layer:  h = rmsnorm(x) ; q,k,v = h Wq, h Wk, h Wv (+ biases) ; rope(q, k)
//                    x += [postnorm] attention(q, K, V) Wo   (causal or sliding window;
//                                                             gemma2 soft-caps the scores)
//                    h = rmsnorm(x) ; x += [postnorm] ffn(h)  (SwiGLU or GeGLU, or a mixture
//                                                              of SwiGLU experts)
//   logits = rmsnorm(x) Wout (gemma2: soft-capped)
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "engine/backend/forward_executor.h"
#include "engine/core/status.h"
#include "engine/core/thread_pool.h"
#include "engine/kv/kv_cache.h"
#include "engine/model/model.h"
#include "engine/model/op_profile.h"
#include "kernels/cpu/ops.h"

namespace inferscope {

struct ForwardOptions {
  int64_t n_ctx = 0;        // context length; 0 = the model's training context
  int n_slots = 1;          // sequences kept in the KV cache (beam width)
  int64_t max_batch = 256;  // tokens per forward call chunk
  // GPU backends: called with the fraction of the weights copied to the device (0..1,
  // non-decreasing), on the creating thread.
  std::function<void(double)> on_upload_progress;
};

// Sizes (in elements) of the activation buffers a forward pass allocates; also gives the
// scratch memory estimate that `inspect` shows before loading.
struct ScratchPlan {
  int64_t batch = 0, embd = 0, q = 0, kv = 0, ffn = 0, router = 0, routes = 0, scores = 0, rope = 0;
  size_t packed_region = 0;  // bytes of one packed-activation region (three are kept)

  static ScratchPlan for_model(const ModelConfig& config, int64_t n_ctx, int64_t max_batch, int n_threads);
  uint64_t total_bytes() const;
};

// RoPE for a session of n_ctx tokens: the file's linear/YaRN scaling and attention factor, and
// its frequency factors (rope_freqs; else LongRoPE's long factors when n_ctx exceeds
// n_ctx_orig, short ones otherwise, as llama.cpp chooses). Points into `weights`.
kernels::RopeParams rope_params_for_context(const ModelConfig& config, const ModelWeights& weights, int64_t n_ctx);

// The CPU backend's executor.
class ForwardPass : public ForwardExecutor {
 public:
  static Result<std::unique_ptr<ForwardPass>> create(std::shared_ptr<const Model> model, ThreadPool& pool,
                                                     const ForwardOptions& options);

  // Appends `tokens` to `slot` (positions continue from the slot's KV length) and writes the
  // logits of the last token, or of every token when `all_logits`, to `logits`
  // ([n_out][n_vocab]). Fails when the context is full or a token id is invalid.
  Status forward(int slot, std::span<const int32_t> tokens, bool all_logits, float* logits) override;

  int64_t n_ctx() const override { return kv_->n_ctx(); }
  int n_slots() const override { return kv_->n_slots(); }
  int64_t kv_length(int slot) const override { return kv_->length(slot); }
  void clear() override { kv_->clear(); }
  Status reorder(std::span<const int32_t> parents) override { return kv_->reorder(parents); }
  ExecutorMemory memory() const override { return {0, kv_->bytes(), scratch_bytes_}; }
  OpProfile& profile() override { return profile_; }
  std::string backend_name() const override { return "cpu"; }

  KvCache& kv() { return *kv_; }
  const Model& model() const { return *model_; }
  uint64_t scratch_bytes() const { return scratch_bytes_; }
  const kernels::RopeParams& rope() const { return rope_; }

 private:
  ForwardPass() = default;
  Status allocate(int64_t max_batch);
  void embed(std::span<const int32_t> tokens);
  void attention_block(const LayerWeights& l, int64_t layer, int slot, int64_t pos0, int64_t n);
  void ffn_block(const LayerWeights& l, int64_t n);
  void dense_ffn(const LayerWeights& l, int64_t n);
  void moe_ffn(const LayerWeights& l, int64_t n);
  void expert_swiglu(const WeightMatrix& gate, const WeightMatrix& up, const WeightMatrix& down, int64_t expert,
                     const float* in, int64_t n, float* out);
  // y[n][w.rows] = x[n][w.cols] . W(matrix `index`)^T, rows split across the pool.
  void matmul(const WeightMatrix& w, int64_t index, const float* x, int64_t n, float* y,
              OpKind kind = OpKind::Matmul);
  void matmul_shared_input(std::span<const WeightMatrix* const> ws, const float* x, int64_t n,
                           std::span<float* const> ys, OpKind kind = OpKind::Matmul);
  void rms_norm_rows(const float* x, const float* w, float* y, int64_t n);

  std::shared_ptr<const Model> model_;
  ThreadPool* pool_ = nullptr;
  std::unique_ptr<KvCache> kv_;
  int64_t max_batch_ = 0;
  uint64_t scratch_bytes_ = 0;
  OpProfile profile_;
  kernels::RopeParams rope_;  // fixed for the session (LongRoPE's choice depends on n_ctx)

  // Activations, [max_batch][width] each.
  std::vector<float> x_, h_, q_, k_, v_, attn_, ffn_a_, ffn_b_, ffn_out_, router_;
  std::vector<float> scores_;  // per thread: n_ctx attention scores
  std::vector<float> rope_cos_, rope_sin_;
  std::vector<uint8_t> packed_;  // activations packed for the dot kernels: 3 regions
  size_t packed_region_ = 0;
  // MoE gather/scatter buffers.
  std::vector<float> expert_in_, expert_out_;
  std::vector<int32_t> expert_ids_;
  std::vector<float> expert_weights_;
  std::vector<int64_t> expert_tokens_;
};

}  // namespace inferscope
