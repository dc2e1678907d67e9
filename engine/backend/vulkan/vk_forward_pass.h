// The whole forward pass of a llama-family model on a Vulkan device: the same computation as
// the CPU backend's ForwardPass (engine/model/forward_pass.h), recorded as one command buffer
// per call and submitted once. Weights, KV cache (F16, one buffer per layer for K and for V)
// and activations stay on the device; the host writes the token ids and reads the logits.
#pragma once

#include <initializer_list>
#include <memory>
#include <vector>

#include "engine/backend/forward_executor.h"
#include "engine/backend/vulkan/ops/vk_matmul.h"
#include "engine/backend/vulkan/vk_device.h"
#include "engine/backend/vulkan/vk_model_weights.h"
#include "engine/backend/vulkan/vk_recorder.h"
#include "engine/model/forward_pass.h"
#include "engine/model/model.h"

namespace inferscope::vulkan {

class VulkanForwardPass : public ForwardExecutor {
 public:
  // Fails before any upload when weights + KV cache + activations exceed the device memory.
  static Result<std::unique_ptr<VulkanForwardPass>> create(std::shared_ptr<const Model> model,
                                                           std::unique_ptr<Device> device,
                                                           const ForwardOptions& options);
  ~VulkanForwardPass() override;

  Status forward(int slot, std::span<const int32_t> tokens, bool all_logits, float* logits) override;
  int64_t n_ctx() const override { return n_ctx_; }
  int n_slots() const override { return static_cast<int>(lengths_.size()); }
  int64_t kv_length(int slot) const override { return lengths_[static_cast<size_t>(slot)]; }
  void clear() override { std::fill(lengths_.begin(), lengths_.end(), 0); }
  Status reorder(std::span<const int32_t> parents) override;
  ExecutorMemory memory() const override;
  ExecutorCounters counters() const override { return counters_; }
  OpProfile& profile() override { return profile_; }
  std::string backend_name() const override { return "vulkan: " + device_->info().name; }

  Device& device() { return *device_; }

 private:
  struct Activations;  // the device buffers of one batch
  enum class LogitRows { None, Last, All };
  VulkanForwardPass() = default;
  Status allocate(const ForwardOptions& options);
  Status build_pipelines();
  Status record_chunk(int slot, int64_t pos0, int64_t n, LogitRows rows);
  void write_token_ids(std::span<const int32_t> tokens);
  Status record_embedding(int64_t n);
  Status record_attention_block(const DeviceLayer& l, int64_t layer, int slot, int64_t pos0, int64_t n);
  Status record_ffn_block(const DeviceLayer& l, int64_t layer, int64_t n);
  Status record_moe(const DeviceLayer& l, int64_t layer, int64_t n, const MatmulInput& h);
  // The buffer `q8` (one of act_'s) when one of `consumers` multiplies inputs of rows x cols in
  // int8 (matmul_takes_q8): the op producing that input then also writes it quantized there.
  // Else an empty span (float products).
  BufferSpan q8_for(const std::unique_ptr<Buffer>& q8, int64_t rows, int64_t cols,
                    std::initializer_list<const DeviceMatrix*> consumers) const;
  Status record_matmul_all_parts(const DeviceMatrix& w, const MatmulInput& x, int64_t n, BufferSpan y,
                                 int64_t y_stride, DispatchLabel label);
  void collect_profile();

  std::shared_ptr<const Model> model_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<DeviceWeights> weights_;
  std::unique_ptr<Recorder> recorder_;
  std::unique_ptr<Activations> act_;
  std::vector<std::unique_ptr<Buffer>> k_cache_, v_cache_;  // per layer: [slot][n_ctx][n_embd_kv] F16
  std::vector<int64_t> lengths_;
  int64_t n_ctx_ = 0;
  static constexpr uint64_t kProfileEvery = 8;  // decode steps per timed one
  uint64_t decode_steps_ = 0;
  int64_t max_batch_ = 0;
  uint64_t token_stride_ = 0;  // bytes between the id lists of the embedding table's parts
  kernels::RopeParams rope_;
  OpProfile profile_;
  ExecutorCounters counters_;
};

}  // namespace inferscope::vulkan
