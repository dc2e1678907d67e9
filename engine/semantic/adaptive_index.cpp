#include "engine/semantic/adaptive_index.h"

#include "engine/semantic/brute_force_index.h"

namespace inferscope::semantic {

AdaptiveIndex::AdaptiveIndex(std::size_t dim, const IndexPolicy& policy)
    : policy_(policy), current_(std::make_unique<BruteForceIndex>(dim)) {}

Status AdaptiveIndex::add(std::int64_t id, std::span<const float> unit_vector) {
  INFERSCOPE_RETURN_IF_ERROR(current_->add(id, unit_vector));
  if (on_hnsw_ || size() <= policy_.hnsw_above) return Status::ok();
  Result<std::unique_ptr<HnswIndex>> graph = HnswIndex::create(dim(), policy_.hnsw, size() * 2);
  if (!graph) return Status::ok();  // brute force still answers, exactly
  Result<std::unique_ptr<VectorIndex>> filled = copy_into(std::move(*graph));
  if (filled) {
    current_ = std::move(*filled);
    on_hnsw_ = true;
  }
  return Status::ok();
}

Status AdaptiveIndex::remove(std::int64_t id) {
  INFERSCOPE_RETURN_IF_ERROR(current_->remove(id));
  if (!on_hnsw_ || size() > policy_.hnsw_above / 2) return Status::ok();
  Result<std::unique_ptr<VectorIndex>> exact = copy_into(std::make_unique<BruteForceIndex>(dim()));
  if (exact) {
    current_ = std::move(*exact);
    on_hnsw_ = false;
  }  // else HNSW keeps answering
  return Status::ok();
}

Result<std::unique_ptr<VectorIndex>> AdaptiveIndex::copy_into(std::unique_ptr<VectorIndex> target) const {
  Status status = Status::ok();
  current_->for_each([&](std::int64_t id, std::span<const float> vector) {
    if (status) status = target->add(id, vector);
  });
  if (!status) return status;
  return target;
}

}  // namespace inferscope::semantic
