#include "engine/backend/cuda/cuda_weights.h"

#include <cuda_runtime.h>

#include "engine/backend/cuda/cuda_error.h"

namespace inferscope::cuda {
namespace {

// Kernels may read a 16-byte vector that starts inside a tensor's last bytes.
constexpr uint64_t kTailSlack = 16;

std::string tensor_name(const WeightMatrix& w) { return w.tensor ? w.tensor->name : std::string("a weight matrix"); }

}  // namespace

uint64_t DeviceWeights::bytes_needed(const ModelWeights& weights) {
  uint64_t total = 0;
  weights.for_each_matrix([&](const WeightMatrix& w) { total += w.bytes() + kTailSlack; });
  weights.for_each_vector([&](const WeightVector& v) { total += static_cast<uint64_t>(v.size) * sizeof(float); });
  return total;
}

Result<std::unique_ptr<DeviceWeights>> DeviceWeights::upload(DeviceMemory& memory, const ModelWeights& weights,
                                                             const std::function<void(double)>& progress) {
  auto out = std::unique_ptr<DeviceWeights>(new DeviceWeights());
  const uint64_t total = std::max<uint64_t>(1, bytes_needed(weights));
  Status status = Status::ok();
  auto copy = [&](const void* host, uint64_t bytes, uint64_t allocate, const std::string& what) -> Result<void*> {
    auto block = memory.allocate(allocate, MemoryUse::Weights, what);
    if (!block) return block.status();
    INFERSCOPE_RETURN_IF_ERROR(cuda_status(cudaMemcpy(block->get(), host, bytes, cudaMemcpyHostToDevice),
                                           "cudaMemcpy(" + what + ")"));
    void* device = block->get();
    out->bytes_ += allocate;
    out->blocks_.push_back(std::move(*block));
    if (progress) progress(static_cast<double>(out->bytes_) / static_cast<double>(total));
    return device;
  };
  weights.for_each_matrix([&](const WeightMatrix& w) {
    if (!status) return;
    auto device = copy(w.data, w.bytes(), w.bytes() + kTailSlack, tensor_name(w));
    if (!device) {
      status = device.status();
      return;
    }
    cuda_kernels::DeviceWeight d;
    d.type = w.type;
    d.data = static_cast<const uint8_t*>(*device);
    d.rows = w.rows;
    d.cols = w.cols;
    d.row_bytes = w.row_bytes;
    d.matrix_bytes = w.rows * w.row_bytes;
    d.n_mats = w.n_mats;
    out->matrices_[w.data] = d;
  });
  weights.for_each_vector([&](const WeightVector& v) {
    if (!status) return;
    const uint64_t bytes = static_cast<uint64_t>(v.size) * sizeof(float);
    auto device = copy(v.data, bytes, bytes, "a weight vector");
    if (!device) {
      status = device.status();
      return;
    }
    out->vectors_[v.data] = static_cast<const float*>(*device);
  });
  if (!status) return status;
  return out;
}

Result<cuda_kernels::DeviceWeight> DeviceWeights::matrix(const WeightMatrix& w) const {
  auto it = w.present() ? matrices_.find(w.data) : matrices_.end();
  if (it == matrices_.end()) return Status::error("internal: " + tensor_name(w) + " is not on the CUDA device");
  return it->second;
}

Result<const float*> DeviceWeights::vector(const float* host) const {
  auto it = host ? vectors_.find(host) : vectors_.end();
  if (it == vectors_.end()) return Status::error("internal: a weight vector is not on the CUDA device");
  return it->second;
}

}  // namespace inferscope::cuda
