// The CPU backend: each op of backend_ops.h runs when called, on a thread pool, with the SIMD
// kernels of kernels/cpu (run-time dispatch). Weights are used in place from host memory; the
// KV cache holds the plan's K and V types (engine/kv/kv_cache.h), quantized as rows are stored
// and read fused by attention. Nothing is allocated while generating.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "engine/backend/backend_ops.h"
#include "engine/core/thread_pool.h"
#include "engine/kv/kv_cache.h"
#include "engine/model/model.h"
#include "kernels/cpu/delta_net.h"
#include "kernels/cpu/llm_int8.h"
#include "kernels/cpu/matmul.h"

namespace inferscope {

class CpuOps : public BackendOps {
 public:
  // `pool` must outlive the ops.
  CpuOps(std::shared_ptr<const Model> model, ThreadPool& pool);

  std::string name() const override { return "cpu"; }
  int threads() const override { return pool_.size(); }
  Status supports(const ForwardPlan&) const override { return Status::ok(); }  // every type and size
  DeviceNeeds needs(const ForwardPlan&) override { return {}; }
  Status upload(const std::function<void(double)>&) override { return Status::ok(); }
  Status allocate(const ForwardPlan& plan) override;

  Status begin_chunk(const Chunk& chunk) override;
  Status end_chunk(const Chunk&) override { return Status::ok(); }

  Status embed(std::span<const int32_t> tokens, OpLabel label) override;
  Status rms_norm(Act in, int64_t in_row0, const WeightVector& w, Act out, int64_t n, Feeds feeds,
                  OpLabel label) override;
  Status layer_norm(Act in, int64_t in_row0, const WeightVector& w, const WeightVector& b, Act out, int64_t n,
                    Feeds feeds, OpLabel label) override;
  Status add_rows(const WeightMatrix& table, std::span<const int32_t> rows, OpLabel label) override;
  Status matmul(std::span<const MatmulOutput> outputs, Act in, int64_t n, OpLabel label) override;
  Status add_bias(Act x, const WeightVector& bias, int64_t n, OpLabel label) override;
  Status rope(const Chunk& chunk, LayerRope which, OpLabel label) override;
  Status kv_store(int64_t layer, const Chunk& chunk, OpLabel label) override;
  Status attention(int64_t layer, const Chunk& chunk, const AttentionShape& shape, Feeds feeds,
                   OpLabel label) override;
  Status glu(FfnActivation act, Act gate, Act up, int64_t rows, int64_t width, Feeds feeds, OpLabel label) override;
  Status activate(FfnActivation act, Act x, int64_t n, int64_t width, Feeds feeds, OpLabel label) override;
  Status add(Act dst, Act src, int64_t n, int64_t width, OpLabel label) override;
  Status softcap(Act x, int64_t n, int64_t width, float cap, OpLabel label) override;
  Status scale(Act x, int64_t n, int64_t width, float s, OpLabel label) override;
  Status lookup(const WeightMatrix& table, std::span<const int32_t> tokens, float s, Act out, OpLabel label) override;
  Status mul_columns(Act dst, Act src, int64_t src_col0, int64_t n, int64_t width, OpLabel label) override;
  Status carry_hidden(Act in, const Chunk& chunk, bool keep_last, OpLabel label) override;
  Status copy_columns(Act dst, int64_t dst_col0, Act src, int64_t n, int64_t width, OpLabel label) override;
  Status moe_route(int64_t n, int64_t n_expert, int64_t k, bool renormalize, OpLabel label) override;
  Status matmul_experts(std::span<const MatmulOutput> outputs, Act in, ExpertInput input, int64_t n, int64_t k,
                        OpLabel label) override;
  Status add_expert_bias(Act x, const WeightMatrix& bias, int64_t n, int64_t k, OpLabel label) override;
  Status moe_combine(int64_t n, int64_t k, const WeightVector* shared_gate, OpLabel label) override;
  Status ssm_conv(int64_t layer, const Chunk& chunk, const WeightMatrix& kernel, OpLabel label) override;
  Status delta_net(int64_t layer, const Chunk& chunk, const DeltaNetWeights& w, OpLabel label) override;
  Status recurrent_copy(std::span<const StateCopy> copies) override;

  Status kv_copy(KvPool pool, std::span<const BlockCopy> copies) override;
  Status kv_rotate(KvPool pool, std::span<const BlockId> blocks, int64_t delta) override;
  ExecutorMemory memory() const override {
    return {0, kv_ ? kv_->bytes() : 0, plan_.recurrent.bytes(), scratch_bytes_};
  }

  // Sees the input rows ([n][cols], cols = outputs[0].w->cols) of every matmul before the
  // product: the weight lab's calibration (engine/weightlab/calibration.h). Expert products
  // (matmul_experts) are not shown.
  using MatmulObserver = std::function<void(std::span<const MatmulOutput> outputs, const float* in, int64_t n)>;
  void observe_matmuls(MatmulObserver observer) { matmul_observer_ = std::move(observer); }

 private:
  float* act(Act a);
  // ys[i][n][ws[i].rows] = x[n][cols] . ws[i]^T: the input packed once per weight type, the
  // rows of all outputs split across the pool.
  // INT8 matrices go through LLM.int8() when the model asks for it (`layer` for its counts).
  void matmul_shared_input(std::span<const WeightMatrix* const> ws, const float* x, int64_t n,
                           std::span<float* const> ys, int64_t layer = -1);
  // a[t] = act(a[t]) * b[t] for the n rows of `width` (a GLU), row by row.
  static void glu_rows(FfnActivation activation, float* a, const float* b, int64_t n, int64_t width);
  OpProfile& profile() { return *plan_.profile; }
  // Groups the chunk's n rows for attention (attention_runs_, row_visible_); returns the number
  // of runs.
  int64_t group_attention_rows(const AttentionShape& shape, int64_t n, int64_t max_run);
  const std::vector<const BlockId*>& blocks_of_rows(int64_t layer) const;
  // The angles of `which`'s layers (rope_cos_/rope_sin_ from `offset`, a row of n_rot / 2 per
  // chunk row) and the heads they rotate.
  struct RopeTable {
    int64_t offset = 0, n_rot = 0, head_dim = 0;
  };
  RopeTable rope_table(LayerRope which) const;
  // A slot's recurrent state in `layer` (RecurrentLayout): the convolution's inputs, then the
  // value heads' matrices; a state's layers follow each other.
  float* conv_state(int slot, int64_t layer);
  void keep_conv_row_states(int64_t layer, const float* state, const float* inputs, int64_t rows, int64_t channels,
                            int64_t kept);
  void delta_net_keeping_row_states(int64_t layer, int64_t head, const kernels::DeltaNetHeadRows& rows, int64_t n,
                                    float* state);
  float* state(int index) { return recurrent_states_.data() + index * plan_.recurrent.floats_per_state(); }
  float* matrix_state(int slot, int64_t layer) { return conv_state(slot, layer) + plan_.recurrent.conv_floats; }

  std::shared_ptr<const Model> model_;
  ThreadPool& pool_;
  ForwardPlan plan_;
  std::unique_ptr<KvCache> kv_;
  uint64_t scratch_bytes_ = 0;
  float* logits_ = nullptr;  // the chunk's logits destination (Act::Logits)
  kernels::TokenBatching batching_ = kernels::TokenBatching::Fastest;  // the chunk's (Chunk::batch_invariant)
  MatmulObserver matmul_observer_;
  kernels::LlmInt8Batch llm_int8_;  // LLM.int8(): the current input's decomposition

  std::array<std::vector<float>, kActCount> acts_;  // the plan's activations (Logits: logits_)
  std::vector<float> scores_;  // per thread: attention scratch for n_ctx positions
  // The chunk's rows' angles: plan.rope's, then (has_swa_rope) plan.rope_swa's (rope_table).
  std::vector<float> rope_cos_, rope_sin_;
  std::vector<int64_t> row_pos_;            // per row of the chunk: its position
  std::vector<int64_t> row_span_last_;      // per row: the last position of its span
  std::vector<const BlockId*> row_blocks_;  // per row: its sequence's block table
  std::vector<const BlockId*> row_window_blocks_;  // per row: its window-pool table (with one)
  // Attention's runs: consecutive rows of one sequence that read the same rows (the same window
  // start and sinks; only how many differs), whose queries share each decoded K/V tile.
  struct AttentionRun {
    int64_t row0 = 0, n = 0, start = 0, sinks = 0;
  };
  std::vector<AttentionRun> attention_runs_;  // [max_batch]
  std::vector<int64_t> row_visible_;          // per row: the KV rows it sees
  std::vector<float> rotate_rows_;          // kv_rotate's scratch: a row per thread
  std::vector<uint8_t> packed_;  // activations packed for the dot kernels: kPackedRegions regions
  // MoE: each route's expert and weight (moe_route), and for matmul_experts the input rows of
  // the routes to one expert gathered, then its outputs before they go to their routes' rows
  // (expert_rows_: three regions of [max_batch][max(n_embd, n_ff_expert)]), and which route
  // each gathered row is.
  std::vector<int32_t> expert_ids_;
  std::vector<float> expert_weights_;
  std::vector<float> expert_rows_;
  std::vector<int64_t> gathered_routes_;
  std::vector<int32_t> expert_order_;  // moe_route's scratch: [n_expert]
  std::vector<float> recurrent_states_;  // [n_states][recurrent layers][conv, matrices]
  std::vector<float> delta_net_scratch_;  // per thread: the chunked form's
};

}  // namespace inferscope
