// Op times of a chunk from CUDA events: an event before the first op and after each, read once
// the chunk has run, each interval charged to its op's kind and layer (OpProfile, the same
// profile the other backends fill).
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "engine/backend/backend_ops.h"
#include "engine/core/status.h"
#include "engine/metrics/op_profile.h"

namespace inferscope::cuda {

class Timeline {
 public:
  Timeline() = default;
  ~Timeline();
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  // Starts timing a chunk on `stream`.
  Status begin(cudaStream_t stream);
  // Marks the end of an op issued on `stream` since the previous mark.
  Status mark(OpLabel label, cudaStream_t stream);
  // After the stream has finished: adds each op's time to `profile` (per layer too), and forgets
  // the chunk.
  Status collect(OpProfile& profile, int64_t n_layer);
  bool active() const { return active_; }

 private:
  Result<cudaEvent_t> event(size_t index);

  std::vector<cudaEvent_t> events_;  // reused across chunks
  std::vector<OpLabel> labels_;      // labels_[i]: the op ending at events_[i + 1]
  bool active_ = false;
};

}  // namespace inferscope::cuda
