// Exact search: every stored vector is scored against the query (kernels::dot_rows over one
// contiguous [size, dim] matrix). Costs one pass over size * dim floats per search (about 6.5 ms
// at 100k x 384 on the build machine, see docs/SEMANTIC-CACHE.md); adding and removing are O(dim).
#pragma once

#include <unordered_map>

#include "engine/semantic/vector_index.h"

namespace inferscope::semantic {

class BruteForceIndex final : public VectorIndex {
 public:
  explicit BruteForceIndex(std::size_t dim) : dim_(dim) {}

  Status add(std::int64_t id, std::span<const float> unit_vector) override;
  // Moves the last row into the removed one's place, so the matrix stays contiguous.
  Status remove(std::int64_t id) override;
  Result<std::vector<Neighbor>> search(std::span<const float> unit_query, std::size_t k) const override;

  bool contains(std::int64_t id) const override { return row_of_.count(id) != 0; }
  std::size_t size() const override { return ids_.size(); }
  std::size_t dim() const override { return dim_; }
  const char* kind() const override { return "brute force"; }
  void for_each(const std::function<void(std::int64_t, std::span<const float>)>& visit) const override;

 private:
  std::size_t dim_;
  std::vector<float> rows_;                         // [size, dim], row r belongs to ids_[r]
  std::vector<std::int64_t> ids_;                   // [size]
  std::unordered_map<std::int64_t, std::size_t> row_of_;
};

}  // namespace inferscope::semantic
