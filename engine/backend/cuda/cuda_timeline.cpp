#include "engine/backend/cuda/cuda_timeline.h"

#include "engine/backend/cuda/cuda_error.h"

namespace inferscope::cuda {

Timeline::~Timeline() {
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
}

Result<cudaEvent_t> Timeline::event(size_t index) {
  while (events_.size() <= index) {
    cudaEvent_t e = nullptr;
    INFERSCOPE_RETURN_IF_ERROR(cuda_status(cudaEventCreate(&e), "cudaEventCreate"));
    events_.push_back(e);
  }
  return events_[index];
}

Status Timeline::begin(cudaStream_t stream) {
  labels_.clear();
  auto e = event(0);
  if (!e) return e.status();
  active_ = true;
  return cuda_status(cudaEventRecord(*e, stream), "cudaEventRecord");
}

Status Timeline::mark(OpLabel label, cudaStream_t stream) {
  auto e = event(labels_.size() + 1);
  if (!e) return e.status();
  labels_.push_back(label);
  return cuda_status(cudaEventRecord(*e, stream), "cudaEventRecord");
}

Status Timeline::collect(OpProfile& profile, int64_t n_layer) {
  active_ = false;
  if (profile.layer_seconds.size() != static_cast<size_t>(n_layer)) profile.layer_seconds.assign(static_cast<size_t>(n_layer), 0.0);
  for (size_t i = 0; i < labels_.size(); ++i) {
    float ms = 0.0f;
    INFERSCOPE_RETURN_IF_ERROR(cuda_status(cudaEventElapsedTime(&ms, events_[i], events_[i + 1]), "cudaEventElapsedTime"));
    const OpLabel l = labels_[i];
    const double seconds = static_cast<double>(ms) * 1e-3;
    if (l.kind < OpKind::Count) profile.add(l.kind, l.layer, seconds);
    if (l.layer >= 0 && l.layer < n_layer) profile.layer_seconds[static_cast<size_t>(l.layer)] += seconds;
  }
  labels_.clear();
  return Status::ok();
}

}  // namespace inferscope::cuda
