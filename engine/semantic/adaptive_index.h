// The index policy of a cache scope: exact brute force while the scope is small, HNSW once it
// holds more than IndexPolicy::hnsw_above entries, brute force again below half of that (the gap
// keeps a scope at the boundary from switching back and forth).
#pragma once

#include <memory>

#include "engine/semantic/hnsw_index.h"
#include "engine/semantic/vector_index.h"

namespace inferscope::semantic {

struct IndexPolicy {
  // bench_semantic, 384 dims: brute force takes 0.4 ms at 10k, 6.5 ms at 100k, 53 ms at 1M; HNSW
  // ~1 ms from 10k up, but costs ~2 ms per entry to build (200 s for 100k) and ~0.3 KB of links
  // per entry. Up to 100k a lookup stays within what embedding the prompt costs anyway and no
  // graph is built; beyond it brute force grows into a delay one notices.
  static constexpr std::size_t kDefaultHnswAbove = 100'000;

  std::size_t hnsw_above = kDefaultHnswAbove;
  HnswParams hnsw;
};

class AdaptiveIndex final : public VectorIndex {
 public:
  AdaptiveIndex(std::size_t dim, const IndexPolicy& policy);

  // Crossing hnsw_above builds the HNSW graph from every vector (minutes at 100k): that add is
  // slow once. When the build fails (out of memory) the scope stays brute force.
  Status add(std::int64_t id, std::span<const float> unit_vector) override;
  Status remove(std::int64_t id) override;
  Result<std::vector<Neighbor>> search(std::span<const float> unit_query, std::size_t k) const override {
    return current_->search(unit_query, k);
  }

  bool contains(std::int64_t id) const override { return current_->contains(id); }
  std::size_t size() const override { return current_->size(); }
  std::size_t dim() const override { return current_->dim(); }
  const char* kind() const override { return current_->kind(); }
  void for_each(const std::function<void(std::int64_t, std::span<const float>)>& visit) const override {
    current_->for_each(visit);
  }

 private:
  Result<std::unique_ptr<VectorIndex>> copy_into(std::unique_ptr<VectorIndex> target) const;

  IndexPolicy policy_;
  std::unique_ptr<VectorIndex> current_;
  bool on_hnsw_ = false;
};

}  // namespace inferscope::semantic
