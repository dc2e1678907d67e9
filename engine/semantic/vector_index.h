// The nearest-neighbour index of one cache scope: unit vectors by entry id, searched by cosine
// similarity (the dot product of unit vectors). Implementations: brute_force_index.h (exact),
// hnsw_index.h (approximate, for large scopes); adaptive_index.h switches between them.
// Not thread-safe: one cache, one thread (like store::Store).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "engine/core/status.h"

namespace inferscope::semantic {

struct Neighbor {
  std::int64_t id = 0;
  float similarity = 0.0f;  // kernels::dot of the query and the stored vector, in [-1, 1]
};

class VectorIndex {
 public:
  virtual ~VectorIndex() = default;

  // unit_vector: [dim()] floats of L2 norm 1 (unit_vector.h). An error when the length is not
  // dim() or `id` is already there; the index is then unchanged.
  virtual Status add(std::int64_t id, std::span<const float> unit_vector) = 0;
  // An error when `id` is not there.
  virtual Status remove(std::int64_t id) = 0;
  // Up to k entries most similar to unit_query ([dim()] floats), most similar first.
  virtual Result<std::vector<Neighbor>> search(std::span<const float> unit_query, std::size_t k) const = 0;

  virtual bool contains(std::int64_t id) const = 0;
  virtual std::size_t size() const = 0;
  virtual std::size_t dim() const = 0;
  virtual const char* kind() const = 0;  // "brute force", "hnsw": for stats and the bench
  // visit(id, vector) for every entry, in no particular order; the span lives for the call.
  virtual void for_each(const std::function<void(std::int64_t, std::span<const float>)>& visit) const = 0;
};

// The error of add/search for a vector of the wrong length.
Status dimension_mismatch(std::size_t expected, std::size_t got);

}  // namespace inferscope::semantic
