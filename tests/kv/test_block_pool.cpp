// The paged KV bookkeeping (engine/kv/block_pool.h): allocation, references, the prefix cache's
// keys and its least-recently-used eviction under a limit.
#include <gtest/gtest.h>

#include <array>
#include <set>
#include <string_view>
#include <vector>

#include "engine/kv/block_pool.h"

namespace inferscope {
namespace {

const std::vector<int32_t> kTokens = {1, 2, 3, 4};

TEST(BlockPool, HandsOutEachBlockOnceLowestFirst) {
  BlockPool pool(4, 16);
  std::vector<BlockId> got;
  for (int i = 0; i < 4; ++i) {
    auto id = pool.allocate();
    ASSERT_TRUE(id);
    got.push_back(*id);
  }
  EXPECT_EQ(got, (std::vector<BlockId>{0, 1, 2, 3}));
  EXPECT_FALSE(pool.allocate()) << "every block is referenced";
  EXPECT_EQ(pool.counts().referenced, 4);
  pool.release(2);
  EXPECT_EQ(pool.counts().free, 1);
  EXPECT_EQ(pool.allocate(), 2) << "a released block without a key is free again";
}

TEST(BlockPool, ReferencesCountAndAWrittenBlockNeedsItsOnlyReference) {
  BlockPool pool(2, 16);
  const BlockId id = *pool.allocate();
  EXPECT_TRUE(pool.writable(id));
  pool.retain(id);
  EXPECT_EQ(pool.ref_count(id), 2);
  EXPECT_FALSE(pool.writable(id)) << "shared";
  pool.release(id);
  EXPECT_TRUE(pool.writable(id));
  pool.publish(id, 77, 0, kTokens);
  EXPECT_FALSE(pool.writable(id)) << "keyed: its rows are what the key says";
  pool.release(id);
  EXPECT_EQ(pool.ref_count(id), 0);
  EXPECT_EQ(pool.counts().cached, 1);
}

TEST(BlockPoolDeathTest, ReleasingAnUnreferencedBlockAborts) {
  BlockPool pool(2, 16);
  const BlockId id = *pool.allocate();
  pool.release(id);
  EXPECT_DEATH(pool.release(id), "block 0 is not referenced");
  EXPECT_DEATH(pool.retain(1), "block 1 is not referenced");
  EXPECT_DEATH(pool.release(7), "block 7 is not referenced");
}

TEST(BlockPool, LookupFindsAPublishedBlockOnlyWithItsTokensAndParent) {
  BlockPool pool(4, 4);
  const BlockId id = *pool.allocate();
  const uint64_t key = block_key(0, kTokens, 5);
  pool.publish(id, key, 0, kTokens);
  pool.release(id);
  const std::vector<int32_t> other = {1, 2, 3, 5};
  EXPECT_FALSE(pool.lookup(key, 0, other)) << "same key, other tokens: a collision is never a hit";
  EXPECT_FALSE(pool.lookup(key, 9, kTokens)) << "other parent";
  EXPECT_FALSE(pool.lookup(key + 1, 0, kTokens));
  auto hit = pool.lookup(key, 0, kTokens);
  ASSERT_TRUE(hit);
  EXPECT_EQ(*hit, id);
  EXPECT_EQ(pool.ref_count(id), 1) << "retained for the caller, out of the cache";
  EXPECT_EQ(pool.counts().cached, 0);
  EXPECT_EQ(pool.hits(), 1);
  EXPECT_EQ(pool.lookups(), 4);
}

TEST(BlockPool, KeysChainOverParentTokensAndSeed) {
  const std::array<std::string_view, 3> a = {"model-a", "f16", "rope 10000"};
  const std::array<std::string_view, 3> b = {"model-a", "q8_0", "rope 10000"};
  const std::array<std::string_view, 2> joined = {"model-af16", "rope 10000"};
  const uint64_t sa = prefix_seed(a), sb = prefix_seed(b);
  EXPECT_NE(sa, sb) << "another KV type never matches";
  EXPECT_NE(sa, prefix_seed(joined)) << "the parts are separated";
  EXPECT_EQ(block_key(0, kTokens, sa), block_key(0, kTokens, sa));
  EXPECT_NE(block_key(0, kTokens, sa), block_key(0, kTokens, sb));
  const uint64_t first = block_key(0, kTokens, sa);
  EXPECT_NE(block_key(first, kTokens, sa), first) << "the same tokens after a parent are another block";
  const std::vector<int32_t> swapped = {2, 1, 3, 4};
  EXPECT_NE(block_key(0, swapped, sa), first);
  std::set<uint64_t> seen;
  for (int32_t t = 0; t < 1000; ++t) seen.insert(block_key(0, std::vector<int32_t>{t}, sa));
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(BlockPool, EvictsTheLeastRecentlyReleasedWhenItNeedsRoom) {
  BlockPool pool(3, 4);
  std::vector<BlockId> ids;
  for (int i = 0; i < 3; ++i) {
    ids.push_back(*pool.allocate());
    const std::vector<int32_t> tokens = {i, i, i, i};
    pool.publish(ids.back(), block_key(0, tokens, 1), 0, tokens);
  }
  pool.release(ids[1]);
  pool.release(ids[0]);
  pool.release(ids[2]);
  EXPECT_EQ(pool.counts().cached, 3);
  EXPECT_EQ(pool.allocate(), ids[1]) << "released first, evicted first";
  const std::vector<int32_t> one = {1, 1, 1, 1};
  EXPECT_FALSE(pool.lookup(block_key(0, one, 1), 0, one)) << "its key went with it";
  const std::vector<int32_t> zero = {0, 0, 0, 0};
  auto kept = pool.lookup(block_key(0, zero, 1), 0, zero);
  ASSERT_TRUE(kept);
  EXPECT_EQ(*kept, ids[0]);
}

TEST(BlockPool, TheCacheLimitIsRespected) {
  BlockPool pool(8, 4);
  pool.set_cache_limit(2);
  for (int i = 0; i < 5; ++i) {
    const BlockId id = *pool.allocate();
    const std::vector<int32_t> tokens = {i, 0, 0, 0};
    pool.publish(id, block_key(0, tokens, 1), 0, tokens);
    pool.release(id);
    EXPECT_LE(pool.counts().cached, 2);
  }
  const BlockCounts c = pool.counts();
  EXPECT_EQ(c.cached, 2);
  EXPECT_EQ(c.free, 6);
  const std::vector<int32_t> newest = {4, 0, 0, 0}, oldest = {0, 0, 0, 0};
  EXPECT_TRUE(pool.lookup(block_key(0, newest, 1), 0, newest));
  EXPECT_FALSE(pool.lookup(block_key(0, oldest, 1), 0, oldest));
  pool.set_cache_limit(0);
  EXPECT_EQ(pool.counts().cached, 0);
}

TEST(BlockPool, AKeyIsPublishedOnce) {
  BlockPool pool(2, 4);
  const BlockId a = *pool.allocate(), b = *pool.allocate();
  const uint64_t key = block_key(0, kTokens, 1);
  pool.publish(a, key, 0, kTokens);
  pool.publish(b, key, 0, kTokens);  // a second sequence computed the same block
  EXPECT_TRUE(pool.writable(b)) << "b stays private";
  pool.release(b);
  EXPECT_EQ(pool.counts().free, 1);
  EXPECT_EQ(pool.lookup(key, 0, kTokens), a);
}

}  // namespace
}  // namespace inferscope
