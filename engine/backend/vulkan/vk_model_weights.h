// A model's weights copied to a Vulkan device. Tensors are packed into a few large "arena"
// buffers (each within maxMemoryAllocationSize); a matrix larger than maxStorageBufferRange is
// split into parts of whole rows (a stack of expert matrices into parts of whole matrices), so
// that every part can be bound to a shader on its own.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "engine/backend/vulkan/ops/vk_matmul.h"
#include "engine/backend/vulkan/vk_buffer.h"
#include "engine/backend/vulkan/vk_device.h"
#include "engine/core/status.h"
#include "engine/model/model.h"

namespace inferscope::vulkan {

// One weight matrix (or stack of n_mats expert matrices) on the device.
struct DeviceMatrix {
  struct Part {
    WeightView view;        // rows [first_row, first_row + view.rows) of each matrix... see below
    int64_t first_row = 0;  // first row of a dense matrix in this part (0 for expert stacks)
  };
  kernels::GgmlType type = kernels::GgmlType::F32;
  int64_t cols = 0, rows = 0, n_mats = 1, row_bytes = 0;
  std::vector<Part> parts;  // a dense matrix: consecutive row ranges; an expert stack: one part

  bool present() const { return !parts.empty(); }
};

// A 1-D f32 vector (norm weights, biases, RoPE factors) on the device.
struct DeviceVector {
  BufferSpan span;
  int64_t size = 0;
  bool present() const { return span.buffer != nullptr; }
};

// Every weight tensor of a model on the device, found by its host tensor.
class DeviceWeights {
 public:
  // Bytes the weights take on `device` (with alignment and padding), computed without
  // uploading anything: the fit check before loading uses it.
  // Fails when a tensor cannot be placed at all (an expert stack above the binding limit).
  static Result<uint64_t> bytes_needed(Device& device, const ModelWeights& weights);

  // Uploads every matrix and vector of ModelWeights::for_each_*; progress(0..1) as they are
  // copied.
  static Result<std::unique_ptr<DeviceWeights>> upload(Device& device, const ModelWeights& weights,
                                                       const std::function<void(double)>& progress = {});

  // The device copy of a host matrix or vector of the uploaded weights (by its data), or
  // nullptr for one that is absent or not of these weights.
  const DeviceMatrix* matrix(const WeightMatrix& w) const;
  const DeviceVector* vector(const float* data) const;
  uint64_t bytes() const { return bytes_; }

 private:
  DeviceWeights() = default;
  std::unordered_map<const uint8_t*, DeviceMatrix> matrices_;
  std::unordered_map<const float*, DeviceVector> vectors_;
  std::vector<std::unique_ptr<Buffer>> arenas_;
  uint64_t bytes_ = 0;
};

}  // namespace inferscope::vulkan
