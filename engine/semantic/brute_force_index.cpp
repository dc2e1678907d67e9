#include "engine/semantic/brute_force_index.h"

#include <algorithm>
#include <string>

#include "kernels/cpu/similarity.h"

namespace inferscope::semantic {
namespace {

// Scores are computed a block of rows at a time into a stack buffer: no allocation per search,
// and the block's scores are merged into the top k while still in L1.
constexpr std::size_t kRowsPerBlock = 256;

// The k best neighbours seen so far, best first. Ties keep the earlier row, so results are
// deterministic.
class TopK {
 public:
  explicit TopK(std::size_t k) : k_(k) { best_.reserve(k); }

  void offer(std::int64_t id, float similarity) {
    if (best_.size() == k_ && !(similarity > best_.back().similarity)) return;
    auto position = std::upper_bound(best_.begin(), best_.end(), similarity,
                                     [](float s, const Neighbor& n) { return s > n.similarity; });
    best_.insert(position, Neighbor{id, similarity});
    if (best_.size() > k_) best_.pop_back();
  }
  std::vector<Neighbor> take() { return std::move(best_); }

 private:
  std::size_t k_;
  std::vector<Neighbor> best_;
};

}  // namespace

Status BruteForceIndex::add(std::int64_t id, std::span<const float> unit_vector) {
  if (unit_vector.size() != dim_) return dimension_mismatch(dim_, unit_vector.size());
  if (contains(id)) return Status::error("cache entry " + std::to_string(id) + " is already in the index");
  rows_.insert(rows_.end(), unit_vector.begin(), unit_vector.end());
  row_of_.emplace(id, ids_.size());
  ids_.push_back(id);
  return Status::ok();
}

Status BruteForceIndex::remove(std::int64_t id) {
  auto found = row_of_.find(id);
  if (found == row_of_.end()) return Status::error("cache entry " + std::to_string(id) + " is not in the index");
  const std::size_t row = found->second, last = ids_.size() - 1;
  if (row != last) {
    std::copy_n(rows_.begin() + last * dim_, dim_, rows_.begin() + row * dim_);
    ids_[row] = ids_[last];
    row_of_[ids_[row]] = row;
  }
  rows_.resize(last * dim_);
  ids_.pop_back();
  row_of_.erase(found);
  return Status::ok();
}

Result<std::vector<Neighbor>> BruteForceIndex::search(std::span<const float> unit_query, std::size_t k) const {
  if (unit_query.size() != dim_) return dimension_mismatch(dim_, unit_query.size());
  TopK top(k);
  if (k == 0) return top.take();
  float scores[kRowsPerBlock];
  for (std::size_t first = 0; first < ids_.size(); first += kRowsPerBlock) {
    const std::size_t n = std::min(kRowsPerBlock, ids_.size() - first);
    kernels::dot_rows(unit_query.data(), rows_.data() + first * dim_, n, dim_, scores);
    for (std::size_t r = 0; r < n; ++r) top.offer(ids_[first + r], scores[r]);
  }
  return top.take();
}

void BruteForceIndex::for_each(const std::function<void(std::int64_t, std::span<const float>)>& visit) const {
  for (std::size_t r = 0; r < ids_.size(); ++r) visit(ids_[r], std::span<const float>(rows_.data() + r * dim_, dim_));
}

}  // namespace inferscope::semantic
