// The Vulkan backend's ops (engine/backend/backend_ops.h): each op is recorded into one
// command buffer per chunk, submitted once at end_chunk(). Weights (DeviceWeights), the KV
// cache (per layer a buffer for K and one for V, each the layer's pool of plan.kv.rows() rows,
// vk_kv.h; none for a layer that keeps no rows) and the activations stay on the device; the host writes the token ids and the
// block tables of the chunk's spans, and reads the logits. Rope, kv_store and attention are
// recorded once per span of a chunk (its rows, positions and table); the other ops take all the
// chunk's rows at once, but for a Gated DeltaNet layer's convolution and recurrence, recorded
// once per span over its slot's state (vk_delta_net.h). A verification that keeps row states
// (Chunk::keep_row_states) records its span's first rows one at a time, each followed by a copy
// of the state it left; the MTP block's carried rows and column copies are buffer copies.
//
// A batch-invariant chunk (Chunk::batch_invariant: a speculative verification) computes every
// row as a chunk of that row alone would: the products take the kernels one token takes
// (TokenBatching::Invariant), and attention is recorded row by row, each with its own position.
//
// The one fusion: an op whose output feeds int8 matvecs (the `feeds` hint) also writes that
// output quantized (vk_quantize.h), and the next products read it.
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "engine/backend/backend_ops.h"
#include "engine/backend/expert_choice_log.h"
#include "engine/backend/vulkan/ops/vk_kv.h"
#include "engine/backend/vulkan/ops/vk_matmul.h"
#include "engine/backend/vulkan/vk_chunk_buffers.h"
#include "engine/backend/vulkan/vk_device.h"
#include "engine/backend/vulkan/vk_model_weights.h"
#include "engine/backend/vulkan/vk_recorder.h"
#include "engine/model/model.h"

namespace inferscope::vulkan {

class VulkanOps : public BackendOps {
 public:
  VulkanOps(std::shared_ptr<const Model> model, std::unique_ptr<Device> device);
  ~VulkanOps() override;

  std::string name() const override { return "vulkan: " + device_->info().name; }
  int64_t max_batch_limit() const override;
  Status supports(const ForwardPlan& plan) const override;
  DeviceNeeds needs(const ForwardPlan& plan) override;
  Status upload(const std::function<void(double)>& progress) override;
  Status allocate(const ForwardPlan& plan) override;
  bool records() const override { return true; }

  Status begin_chunk(const Chunk& chunk) override;
  Status end_chunk(const Chunk& chunk) override;
  Status discard_chunk() override { return recorder_->discard(); }

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
  ExecutorCounters counters() const override { return counters_; }

  Device& device() { return *device_; }

 private:
  BufferSpan span(Act a) const;
  MatmulInput input(Act a) const { return MatmulInput(span(a), q8_[static_cast<size_t>(a)]); }
  // The quantized copy the op writing `a` also writes, when one of `feeds` multiplies rows x
  // cols of it in int8 (matmul_takes_q8); else empty. Records that `a` has it (or has none).
  BufferSpan q8_output(Act a, int64_t rows, int64_t cols, Feeds feeds);
  // The q8 buffer, for rows about to be written there: no activation's copy is in it any more.
  BufferSpan claim_q8(const std::unique_ptr<Buffer>& q8);
  void wrote(Act a) { q8_[static_cast<size_t>(a)] = {}; }
  Result<const DeviceMatrix*> device_matrix(const WeightMatrix& w) const;
  Result<BufferSpan> device_vector(const float* data) const;
  // An F32 matrix uploaded as one part of packed rows (expert biases, convolution kernels).
  Result<BufferSpan> packed_f32_rows(const WeightMatrix& w) const;
  // Slot or checkpoint `state`'s part of recurrent `layer` (RecurrentLayout::layer_offset).
  BufferSpan conv_state(int state, int64_t layer) const;
  BufferSpan matrix_state(int state, int64_t layer) const;
  // State `state`'s carried row (RecurrentLayout::carry_offset): n_embd floats.
  BufferSpan carried_row(int state) const;
  Status check_kv_pool_binding(const ForwardPlan& plan) const;
  // The spans' block tables into act_->block_table, back to back from entry 0 (their main
  // tables, then their window tables), for the recording to read (through the staging buffer
  // and a copy where it is not host-visible).
  Status write_block_tables(std::span<const ChunkSpan> spans);
  // rows [row0, ...) of an activation of `width` values a row.
  BufferSpan rows_from(Act a, int64_t row0, int64_t width) const;
  // The spans of the chunk in order, each with its first row and its table of `pool` as
  // begin_chunk wrote it: f(span, row0, table) -> Status, stopping at the first error.
  template <class F>
  Status for_each_span(const Chunk& chunk, KvPool pool, F&& f) const;
  // The per-pair frequency divisors of RoPE `which` on the device, or BufferSpan{} for none.
  Result<BufferSpan> freq_factors(LayerRope which) const;
  // Scratch for kv_rotate between chunks: the largest activation buffer.
  BufferSpan rotate_scratch() const;
  Status record_matmul_all_parts(const DeviceMatrix& w, const MatmulInput& x, int64_t n, BufferSpan y,
                                 int64_t y_stride, DispatchLabel label);
  void collect_profile();

  std::shared_ptr<const Model> model_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<DeviceWeights> weights_;
  std::unique_ptr<Recorder> recorder_;
  std::unique_ptr<ChunkBuffers> act_;
  std::vector<std::unique_ptr<Buffer>> k_cache_, v_cache_;  // per layer: the rows of its pool's blocks
  // A hybrid model's recurrent states (plan.recurrent): one buffer per state, floats_per_state()
  // floats, so that recurrent_copy copies whole buffers.
  std::vector<std::unique_ptr<Buffer>> recurrent_;
  // One layer's buffers in each pool (KvPool::Main, Window): plan.kv with n_layer 1 and that
  // pool's blocks.
  std::array<KvCacheLayout, 2> pool_kv_;
  // Layer `layer`'s view of its pool's buffers: the rows' first layer_kv_width values.
  KvCacheLayout layer_kv(int64_t layer) const;
  std::array<BufferSpan, kActCount> q8_{};  // per activation: its int8 copy, when the producer wrote one
  ForwardPlan plan_;
  TokenBatching batching_ = TokenBatching::Fastest;  // the chunk's (Chunk::batch_invariant)
  static constexpr uint64_t kProfileEvery = 8;  // decode steps per timed one
  uint64_t decode_steps_ = 0;
  uint64_t row_lookups_ = 0;  // add_rows calls recorded in the chunk (ChunkBuffers::kRowLookups at most)
  int64_t id_lists_ = 0;      // lookup id lists written in the chunk (ChunkBuffers::id_lists at most)
  ExecutorCounters counters_;
  ExpertChoiceLog routed_;  // the expert choices copied to expert_ids_host in the chunk being recorded
};

}  // namespace inferscope::vulkan
