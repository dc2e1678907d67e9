// The nearest-neighbour indexes: brute force is exact; HNSW finds the same nearest entry for
// random unit vectors at 1k and 100k entries, queried in the cache's regime: a stored vector
// moved to cosine 0.90 (the lowest threshold a user can set) in a random direction. A query
// with no stored vector that close is a miss whatever the index answers; for such uniformly
// random queries HNSW's recall on random data is low (bench_semantic reports it).
// The adaptive index switches between the two.
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "engine/semantic/adaptive_index.h"
#include "engine/semantic/brute_force_index.h"
#include "engine/semantic/hnsw_index.h"
#include "kernels/cpu/similarity.h"
#include "tests/semantic/semantic_test_support.h"

namespace inferscope::semantic {
namespace {

using testing::basis;
using testing::random_unit;
using testing::random_unit_near;

TEST(BruteForceIndex, FindsTheMostSimilarFirst) {
  BruteForceIndex index(4);
  ASSERT_TRUE(index.add(10, basis(4, 0)));
  ASSERT_TRUE(index.add(11, basis(4, 1)));
  ASSERT_TRUE(index.add(12, testing::at_cosine(4, 0, 0.8)));
  Result<std::vector<Neighbor>> found = index.search(basis(4, 0), 2);
  ASSERT_TRUE(found) << found.message();
  ASSERT_EQ(found->size(), 2u);
  EXPECT_EQ((*found)[0].id, 10);
  EXPECT_FLOAT_EQ((*found)[0].similarity, 1.0f);
  EXPECT_EQ((*found)[1].id, 12);
  EXPECT_NEAR((*found)[1].similarity, 0.8f, 1e-6);
  EXPECT_EQ(index.search(basis(4, 0), 10)->size(), 3u);
  EXPECT_TRUE(index.search(basis(4, 0), 0)->empty());
}

TEST(BruteForceIndex, RemoveKeepsTheOthersFindable) {
  BruteForceIndex index(4);
  for (std::int64_t id = 0; id < 4; ++id) ASSERT_TRUE(index.add(id, basis(4, static_cast<std::size_t>(id))));
  ASSERT_TRUE(index.remove(1));
  EXPECT_FALSE(index.contains(1));
  EXPECT_EQ(index.size(), 3u);
  for (std::int64_t id : {0, 2, 3}) EXPECT_EQ(index.search(basis(4, static_cast<std::size_t>(id)), 1)->front().id, id);
  EXPECT_FALSE(index.remove(1));
}

TEST(BruteForceIndex, WrongDimensionOrDuplicateIdIsAnError) {
  BruteForceIndex index(4);
  ASSERT_TRUE(index.add(1, basis(4, 0)));
  Status wrong = index.add(2, basis(3, 0));
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.message().find("3 dimensions"), std::string::npos) << wrong.message();
  EXPECT_FALSE(index.add(1, basis(4, 1)));
  EXPECT_FALSE(index.search(basis(5, 0), 1));
  EXPECT_EQ(index.size(), 1u);
}

TEST(HnswIndex, RemovedEntriesAreNeverFoundAndIdsMayComeBack) {
  std::mt19937 rng(5);
  Result<std::unique_ptr<HnswIndex>> index = HnswIndex::create(16, HnswParams{}, 4);
  ASSERT_TRUE(index) << index.message();
  std::vector<std::vector<float>> vectors;
  for (std::int64_t id = 0; id < 100; ++id) {  // grows past the capacity of 4
    vectors.push_back(random_unit(rng, 16));
    ASSERT_TRUE((*index)->add(id, vectors.back()));
  }
  ASSERT_TRUE((*index)->remove(7));
  EXPECT_FALSE((*index)->remove(7));
  EXPECT_NE((*index)->search(vectors[7], 1)->front().id, 7);
  ASSERT_TRUE((*index)->add(7, vectors[8]));  // a reused id with another vector
  EXPECT_EQ((*index)->size(), 100u);
  EXPECT_EQ((*index)->deleted_nodes(), 1u);
  const Neighbor best = (*index)->search(vectors[8], 1)->front();
  EXPECT_TRUE(best.id == 7 || best.id == 8);
  EXPECT_EQ(best.similarity, kernels::dot(vectors[8].data(), vectors[8].data(), 16));  // exactly the kernel's value
}

TEST(HnswIndex, RebuildsOnceDeletedNodesOutnumberLiveOnes) {
  std::mt19937 rng(9);
  Result<std::unique_ptr<HnswIndex>> index = HnswIndex::create(8, HnswParams{});
  ASSERT_TRUE(index) << index.message();
  std::vector<std::vector<float>> vectors;
  for (std::int64_t id = 0; id < 3000; ++id) {
    vectors.push_back(random_unit(rng, 8));
    ASSERT_TRUE((*index)->add(id, vectors.back()));
  }
  for (std::int64_t id = 0; id < 2000; ++id) ASSERT_TRUE((*index)->remove(id));
  EXPECT_EQ((*index)->size(), 1000u);
  EXPECT_LT((*index)->deleted_nodes(), 1000u);  // rebuilt when the deleted passed the live
  for (std::int64_t id = 2000; id < 3000; id += 97) {
    EXPECT_EQ((*index)->search(vectors[static_cast<std::size_t>(id)], 1)->front().id, id);
  }
}

// Recall@1 of HNSW against brute force, for queries at cosine 0.90 from a random stored vector.
double agreement(std::size_t n, std::size_t dim, const HnswParams& params, std::size_t n_queries) {
  std::mt19937 rng(42);
  BruteForceIndex exact(dim);
  Result<std::unique_ptr<HnswIndex>> graph = HnswIndex::create(dim, params, n);
  EXPECT_TRUE(graph) << graph.message();
  std::vector<std::vector<float>> stored;
  for (std::size_t i = 0; i < n; ++i) {
    stored.push_back(random_unit(rng, dim));
    EXPECT_TRUE(exact.add(static_cast<std::int64_t>(i), stored.back()));
    EXPECT_TRUE((*graph)->add(static_cast<std::int64_t>(i), stored.back()));
  }
  std::size_t agreed = 0;
  for (std::size_t q = 0; q < n_queries; ++q) {
    const std::vector<float> query = random_unit_near(rng, stored[rng() % n], 0.90);
    const Neighbor truth = exact.search(query, 1)->front();
    const Neighbor approx = (*graph)->search(query, 1)->front();
    agreed += approx.id == truth.id;
    if (approx.id == truth.id) {
      EXPECT_EQ(approx.similarity, truth.similarity);
    }
  }
  return static_cast<double>(agreed) / static_cast<double>(n_queries);
}

TEST(HnswIndex, AgreesWithBruteForceAt1kEntriesOf384Dims) {
  EXPECT_GE(agreement(1000, 384, HnswParams{}, 200), 0.99);
}

// 100k entries of 384 dims with the default parameters take minutes to insert on the 2-core
// build machine (bench_semantic measures them: recall 1.00); 64 dims and a lighter graph
// (m 16, ef_construction 64, ef_search 64) keep this test under 20 s.
TEST(HnswIndex, AgreesWithBruteForceAt100kEntriesOf64Dims) {
  const auto start = std::chrono::steady_clock::now();
  HnswParams light;
  light.m = 16;
  light.ef_construction = 64;
  light.ef_search = 64;
  EXPECT_GE(agreement(100'000, 64, light, 200), 0.99);
  std::printf("100k x 64 agreement test: %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

TEST(AdaptiveIndex, SwitchesToHnswAboveTheThresholdAndBackBelowHalf) {
  std::mt19937 rng(1);
  IndexPolicy policy;
  policy.hnsw_above = 40;
  AdaptiveIndex index(8, policy);
  std::vector<std::vector<float>> vectors;
  for (std::int64_t id = 0; id < 40; ++id) {
    vectors.push_back(random_unit(rng, 8));
    ASSERT_TRUE(index.add(id, vectors.back()));
  }
  EXPECT_STREQ(index.kind(), "brute force");
  vectors.push_back(random_unit(rng, 8));
  ASSERT_TRUE(index.add(40, vectors.back()));
  EXPECT_STREQ(index.kind(), "hnsw");
  EXPECT_EQ(index.size(), 41u);
  for (std::int64_t id = 0; id <= 40; id += 5) EXPECT_EQ(index.search(vectors[id], 1)->front().id, id);
  for (std::int64_t id = 0; id < 21; ++id) ASSERT_TRUE(index.remove(id));
  EXPECT_STREQ(index.kind(), "brute force");
  EXPECT_EQ(index.size(), 20u);
  for (std::int64_t id = 21; id <= 40; ++id) EXPECT_EQ(index.search(vectors[id], 1)->front().id, id);
}

}  // namespace
}  // namespace inferscope::semantic
