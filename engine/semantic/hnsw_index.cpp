#include "engine/semantic/hnsw_index.h"

// hnswlib 0.6.2's prefetches read one link past a full upper-layer list, beyond its allocation
// (AddressSanitizer reports it); without them searches are ~15% slower but defined. Its SIMD
// distances, the other thing this turns off, are not used: the space below brings its own.
#define NO_MANUAL_VECTORIZATION
#include <hnswlib/hnswlib.h>

#include <algorithm>
#include <exception>
#include <limits>
#include <string>

#include "kernels/cpu/similarity.h"

namespace inferscope::semantic {
namespace {

constexpr std::int64_t kRemoved = std::numeric_limits<std::int64_t>::min();
// Below this many deleted nodes a rebuild is not worth its cost, whatever the ratio.
constexpr std::size_t kMinDeletedForRebuild = 1024;

// hnswlib wants a distance (smaller = closer); the negated dot product of unit vectors is one, and
// negating it back gives the similarity bit for bit. hnswlib reads the first size_t behind the
// parameter as the dimension (getDataByLabel), so the parameter is exactly that.
class NegativeDotSpace final : public hnswlib::SpaceInterface<float> {
 public:
  explicit NegativeDotSpace(std::size_t dim) : dim_(dim) {}
  std::size_t get_data_size() override { return dim_ * sizeof(float); }
  hnswlib::DISTFUNC<float> get_dist_func() override { return &negative_dot; }
  void* get_dist_func_param() override { return &dim_; }

 private:
  static float negative_dot(const void* a, const void* b, const void* dim) {
    return -kernels::dot(static_cast<const float*>(a), static_cast<const float*>(b),
                         *static_cast<const std::size_t*>(dim));
  }
  std::size_t dim_;
};

Status hnsw_error(const std::string& doing, const std::exception& e) {
  return Status::error("HNSW index: " + doing + ": " + e.what());
}

}  // namespace

struct HnswIndex::Graph {
  Graph(std::size_t dim, const HnswParams& params, std::size_t capacity)
      : space(dim), hnsw(&space, capacity, params.m, params.ef_construction, params.seed) {
    hnsw.setEf(params.ef_search);
  }
  NegativeDotSpace space;  // declared first: hnsw keeps pointers into it
  hnswlib::HierarchicalNSW<float> hnsw;
};

Result<std::unique_ptr<HnswIndex>> HnswIndex::create(std::size_t dim, const HnswParams& params,
                                                     std::size_t capacity) {
  try {
    auto graph = std::make_unique<Graph>(dim, params, std::max<std::size_t>(capacity, 16));
    return std::unique_ptr<HnswIndex>(new HnswIndex(dim, params, std::move(graph)));
  } catch (const std::exception& e) {
    return hnsw_error("creating a graph for " + std::to_string(capacity) + " vectors", e);
  }
}

HnswIndex::HnswIndex(std::size_t dim, const HnswParams& params, std::unique_ptr<Graph> graph)
    : dim_(dim), params_(params), graph_(std::move(graph)) {}

HnswIndex::~HnswIndex() = default;

Status HnswIndex::add(std::int64_t id, std::span<const float> unit_vector) {
  if (unit_vector.size() != dim_) return dimension_mismatch(dim_, unit_vector.size());
  if (contains(id)) return Status::error("cache entry " + std::to_string(id) + " is already in the index");
  const std::size_t label = id_of_label_.size();
  try {
    hnswlib::HierarchicalNSW<float>& hnsw = graph_->hnsw;
    if (hnsw.cur_element_count == hnsw.max_elements_) hnsw.resizeIndex(hnsw.max_elements_ * 2);
    hnsw.addPoint(unit_vector.data(), label);
  } catch (const std::exception& e) {
    return hnsw_error("adding cache entry " + std::to_string(id), e);
  }
  id_of_label_.push_back(id);
  label_of_id_.emplace(id, label);
  return Status::ok();
}

Status HnswIndex::remove(std::int64_t id) {
  auto found = label_of_id_.find(id);
  if (found == label_of_id_.end()) return Status::error("cache entry " + std::to_string(id) + " is not in the index");
  try {
    graph_->hnsw.markDelete(found->second);
  } catch (const std::exception& e) {
    return hnsw_error("removing cache entry " + std::to_string(id), e);
  }
  id_of_label_[found->second] = kRemoved;
  label_of_id_.erase(found);
  if (deleted_nodes() >= kMinDeletedForRebuild && deleted_nodes() > size()) {
    // The entry is gone either way; a rebuild that fails (out of memory) leaves the deleted
    // nodes as waypoints and is tried again at the next removal.
    (void)rebuild_without_deleted();
  }
  return Status::ok();
}

Result<std::vector<Neighbor>> HnswIndex::search(std::span<const float> unit_query, std::size_t k) const {
  if (unit_query.size() != dim_) return dimension_mismatch(dim_, unit_query.size());
  std::vector<Neighbor> best;
  if (k == 0 || size() == 0) return best;
  try {
    auto found = graph_->hnsw.searchKnn(unit_query.data(), k);  // farthest on top
    best.resize(found.size());
    for (std::size_t i = best.size(); i-- > 0; found.pop()) {
      best[i] = Neighbor{id_of_label_[found.top().second], -found.top().first};
    }
  } catch (const std::exception& e) {
    return hnsw_error("searching", e);
  }
  return best;
}

void HnswIndex::set_ef_search(std::size_t ef_search) {
  params_.ef_search = ef_search;
  graph_->hnsw.setEf(ef_search);
}

void HnswIndex::for_each(const std::function<void(std::int64_t, std::span<const float>)>& visit) const {
  const hnswlib::HierarchicalNSW<float>& hnsw = graph_->hnsw;
  for (const auto& [id, label] : label_of_id_) {
    const char* data = hnsw.getDataByInternalId(hnsw.label_lookup_.at(label));
    visit(id, std::span<const float>(reinterpret_cast<const float*>(data), dim_));
  }
}

// A fresh graph of the live nodes replaces this one; on failure this one stays as it is.
Status HnswIndex::rebuild_without_deleted() {
  Result<std::unique_ptr<HnswIndex>> fresh = create(dim_, params_, size() * 2);
  if (!fresh) return fresh.status();
  Status status = Status::ok();
  for_each([&](std::int64_t id, std::span<const float> vector) {
    if (status) status = (*fresh)->add(id, vector);
  });
  if (!status) return status;
  graph_ = std::move((*fresh)->graph_);
  id_of_label_ = std::move((*fresh)->id_of_label_);
  label_of_id_ = std::move((*fresh)->label_of_id_);
  return Status::ok();
}

}  // namespace inferscope::semantic
