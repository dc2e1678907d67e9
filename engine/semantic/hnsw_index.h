// Approximate search for large scopes: a hierarchical navigable small-world graph (Debian's
// header-only hnswlib 0.6.2, kept out of this header so it is compiled in one file only).
// Distances are the negated dot product of unit vectors, so a result's similarity is exactly the
// kernels::dot value the brute-force index reports. Removal marks a node deleted (hnswlib keeps it
// as a waypoint); once deleted nodes outnumber live ones the graph is rebuilt from the live ones.
// hnswlib's exceptions (out of memory, capacity) come back as Status.
#pragma once

#include <memory>
#include <unordered_map>

#include "engine/semantic/vector_index.h"

namespace inferscope::semantic {

// Chosen with bench_semantic (docs/SEMANTIC-CACHE.md): on 100k random 384-dim unit vectors,
// recall@1 is 1.00 for queries at cosine 0.90-0.95 from a stored vector (the only ones that can
// hit), at ~1 ms a search; m 16 / ef_construction 100 reached only 0.91. Uniformly random
// queries, whose answer is a miss anyway, get 0.30: random data has no neighbourhoods to follow.
struct HnswParams {
  std::size_t m = 32;                 // links per node on upper layers, 2m on the bottom one
  std::size_t ef_construction = 200;  // candidate list while inserting
  std::size_t ef_search = 128;        // candidate list while searching (at least k)
  std::size_t seed = 100;             // level draws: the same inserts give the same graph
};

class HnswIndex final : public VectorIndex {
 public:
  // An empty graph with room for `capacity` nodes (it grows by doubling).
  static Result<std::unique_ptr<HnswIndex>> create(std::size_t dim, const HnswParams& params,
                                                   std::size_t capacity = 1024);
  ~HnswIndex() override;

  Status add(std::int64_t id, std::span<const float> unit_vector) override;
  Status remove(std::int64_t id) override;
  Result<std::vector<Neighbor>> search(std::span<const float> unit_query, std::size_t k) const override;

  bool contains(std::int64_t id) const override { return label_of_id_.count(id) != 0; }
  std::size_t size() const override { return label_of_id_.size(); }
  std::size_t dim() const override { return dim_; }
  const char* kind() const override { return "hnsw"; }
  void for_each(const std::function<void(std::int64_t, std::span<const float>)>& visit) const override;

  // Trades recall for speed on a built graph (the bench's recall table); at least k is used.
  void set_ef_search(std::size_t ef_search);
  // Nodes marked deleted and still in the graph.
  std::size_t deleted_nodes() const { return id_of_label_.size() - label_of_id_.size(); }

 private:
  struct Graph;  // hnswlib's space and HierarchicalNSW
  HnswIndex(std::size_t dim, const HnswParams& params, std::unique_ptr<Graph> graph);
  Status rebuild_without_deleted();

  std::size_t dim_;
  HnswParams params_;
  std::unique_ptr<Graph> graph_;
  // hnswlib labels are slots numbered in insertion order, never reused, so a removed id that comes
  // back (SQLite may reuse the largest rowid) is a new node rather than hnswlib's update path.
  std::vector<std::int64_t> id_of_label_;  // [nodes]; kRemoved for deleted nodes
  std::unordered_map<std::int64_t, std::size_t> label_of_id_;
};

}  // namespace inferscope::semantic
