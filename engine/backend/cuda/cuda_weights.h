// The model's weights on the CUDA device: every matrix in its file's block layout and every
// F32 vector, one allocation each (tagged "weights"), found again by the host tensor's data
// pointer (ModelWeights::for_each_matrix / for_each_vector, as the forward pass names them).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "engine/backend/cuda/cuda_memory.h"
#include "engine/core/status.h"
#include "engine/model/model_weights.h"
#include "kernels/cuda/matvec.h"

namespace inferscope::cuda {

class DeviceWeights {
 public:
  // Bytes upload() will allocate for `weights`.
  static uint64_t bytes_needed(const ModelWeights& weights);
  // Copies every present matrix and vector; progress(0..1) as the bytes go.
  static Result<std::unique_ptr<DeviceWeights>> upload(DeviceMemory& memory, const ModelWeights& weights,
                                                       const std::function<void(double)>& progress);

  // The device copy of `w` (a matrix, row slice or expert stack the model holds), or an error.
  Result<cuda_kernels::DeviceWeight> matrix(const WeightMatrix& w) const;
  // The device copy of a vector's data, or an error.
  Result<const float*> vector(const float* host) const;
  uint64_t bytes() const { return bytes_; }

 private:
  std::vector<DeviceBlock> blocks_;
  std::unordered_map<const uint8_t*, cuda_kernels::DeviceWeight> matrices_;
  std::unordered_map<const float*, const float*> vectors_;
  uint64_t bytes_ = 0;
};

}  // namespace inferscope::cuda
