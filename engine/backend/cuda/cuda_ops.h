// The CUDA backend's ops (engine/backend/backend_ops.h): each op is issued onto one stream as it
// is called, over the device copies of the weights (cuda_weights.h), the paged KV pools (one K
// and one V allocation per layer, the CPU's row formats) and the plan's activation buffers
// (ActivationPlan, as every backend sizes them). end_chunk copies the logits back and waits. Decode steps (up to
// kMaxMatvecRows rows) run as CUDA graphs (cuda_decode_graphs.h) except one in kProfileEvery,
// which runs op by op with CUDA events to fill the op profile; prefill chunks are always timed.
// A batch-invariant chunk (Chunk::batch_invariant: a speculative verification) computes each
// row as a one-row decode step would: its products run the GEMV kernels in pieces of
// kMaxMatvecRows rows (cuda_matmul.h) and its attention one launch per row over the whole
// context; every other op already treats each row on its own.
// A hybrid model's recurrent states (plan.recurrent) are one allocation; ssm_conv and delta_net
// take every row of a chunk in one launch each, finding each row's slot and position on the
// device (cuda_chunk_inputs.h), so a decode step of a hybrid model is captured and replayed as
// any other; recurrent_copy copies whole states outside a chunk. A verification keeping row
// states (Chunk::keep_row_states) has the same kernels write them, as does carry_hidden for the
// MTP block's carried rows.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <vector>

#include "engine/backend/backend_ops.h"
#include "engine/backend/expert_choice_log.h"
#include "engine/backend/cuda/cuda_chunk_inputs.h"
#include "engine/backend/cuda/cuda_context.h"
#include "engine/backend/cuda/cuda_decode_graphs.h"
#include "engine/backend/cuda/cuda_matmul.h"
#include "engine/backend/cuda/cuda_memory.h"
#include "engine/backend/cuda/cuda_timeline.h"
#include "engine/backend/cuda/cuda_weights.h"
#include "engine/model/model.h"
#include "kernels/cuda/attention.h"
#include "kernels/cuda/delta_net.h"

namespace inferscope::cuda {

struct CudaOpsOptions {
  bool graphs = true;  // replay decode steps as CUDA graphs
};

class CudaOps : public BackendOps {
 public:
  static constexpr uint64_t kProfileEvery = 8;

  CudaOps(std::shared_ptr<const Model> model, std::unique_ptr<CudaContext> context, CudaOpsOptions options = {});
  ~CudaOps() override;

  std::string name() const override;
  Status supports(const ForwardPlan& plan) const override;
  DeviceNeeds needs(const ForwardPlan& plan) override;
  Status upload(const std::function<void(double)>& progress) override;
  Status allocate(const ForwardPlan& plan) override;

  Status begin_chunk(const Chunk& chunk) override;
  Status end_chunk(const Chunk& chunk) override;
  Status discard_chunk() override;

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
  Status moe_route(int64_t n, int64_t n_expert, int64_t k, bool renormalize, OpLabel label) override;
  Status matmul_experts(std::span<const MatmulOutput> outputs, Act in, ExpertInput input, int64_t n, int64_t k,
                        OpLabel label) override;
  Status add_expert_bias(Act x, const WeightMatrix& bias, int64_t n, int64_t k, OpLabel label) override;
  Status moe_combine(int64_t n, int64_t k, const WeightVector* shared_gate, OpLabel label) override;
  Status ssm_conv(int64_t layer, const Chunk& chunk, const WeightMatrix& kernel, OpLabel label) override;
  Status delta_net(int64_t layer, const Chunk& chunk, const DeltaNetWeights& w, OpLabel label) override;
  Status recurrent_copy(std::span<const StateCopy> copies) override;
  Status carry_hidden(Act in, const Chunk& chunk, bool keep_last, OpLabel label) override;
  Status copy_columns(Act dst, int64_t dst_col0, Act src, int64_t n, int64_t width, OpLabel label) override;

  Status kv_copy(KvPool pool, std::span<const BlockCopy> copies) override;
  Status kv_rotate(KvPool pool, std::span<const BlockId> blocks, int64_t delta) override;

  ExecutorMemory memory() const override;
  ExecutorCounters counters() const override;

 private:
  struct Activations;

  // Runs `device_work` unless the step replays a graph, then marks the op's end on a timed
  // chunk; a failure abandons a capture. `values` go into the step's fingerprint.
  template <class F>
  Status issue(OpLabel label, std::initializer_list<uint64_t> values, F&& device_work);
  bool replaying() const { return mode_ == DecodeGraphs::Mode::Replay; }
  cudaStream_t stream() const { return context_->stream(); }

  float* act(Act a) const;
  Result<cuda_kernels::DeviceWeight> device_matrix(const WeightMatrix& w) const { return weights_->matrix(w); }
  Result<const float*> device_vector(const float* host) const { return weights_->vector(host); }
  // An F32 matrix's rows on the device, packed (expert biases, convolution kernels).
  Result<const float*> packed_f32_rows(const WeightMatrix& w) const;
  // Slot 0's part of recurrent `layer` in the states: its convolution inputs, then its matrices
  // (RecurrentLayout::layer_offset); slot s's is floats_per_state() floats further per slot.
  float* layer_state(int64_t layer) const;
  // Where the kernels leave the states after a chunk's first rows (Chunk::keep_row_states; none
  // otherwise): the part `offset` floats into the first row state.
  cuda_kernels::RowStates row_states(const Chunk& chunk, int64_t offset) const;
  cuda_kernels::KvPool pool(int64_t layer, bool keys) const;
  // The per-pair frequency divisors of RoPE `which` on the device, or null for none.
  Result<const float*> freq_factors(LayerRope which) const;
  uint64_t scratch_estimate(const ForwardPlan& plan) const;

  std::shared_ptr<const Model> model_;
  std::unique_ptr<CudaContext> context_;
  CudaOpsOptions options_;
  DeviceMemory memory_;
  std::unique_ptr<DeviceWeights> weights_;
  ForwardPlan plan_;
  std::unique_ptr<Activations> act_;
  std::vector<DeviceBlock> k_pools_, v_pools_;
  DeviceBlock recurrent_;  // a hybrid model's states (plan.recurrent), back to back
  std::optional<ChunkInputs> inputs_;
  std::optional<MatmulRunner> matmul_;
  DecodeGraphs graphs_;
  Timeline timeline_;
  DecodeGraphs::Mode mode_ = DecodeGraphs::Mode::Eager;
  bool in_chunk_ = false;
  bool batch_invariant_ = false;  // the chunk's Chunk::batch_invariant
  int64_t id_lists_ = 0;  // id lists the chunk's lookups staged (ChunkInputs::stage_ids)
  uint64_t decode_steps_ = 0;
  ExpertChoiceLog routed_;  // the expert choices copied to the host in the chunk being issued
  ExecutorCounters counters_;
};

}  // namespace inferscope::cuda
