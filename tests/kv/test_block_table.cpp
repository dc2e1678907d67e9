// A sequence's blocks (engine/kv/block_table.h): growth, release, forks sharing blocks with
// copy-on-write of a shared partial block, and the prefix cache across tables.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "engine/kv/block_table.h"

namespace inferscope {
namespace {

std::vector<int32_t> iota_tokens(int n, int32_t first = 100) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  std::iota(t.begin(), t.end(), first);
  return t;
}

// Writes n positions the way the forward pass does: prepare, then commit.
void write(BlockTable& table, int64_t n, std::vector<BlockCopy>* copies = nullptr) {
  std::vector<BlockCopy> ignored;
  ASSERT_TRUE(table.prepare_write(n, copies ? copies : &ignored));
  table.commit(n);
}

TEST(BlockTable, GrowsABlockAtATimeAndGivesThemBack) {
  BlockPool pool(8, 16);
  {
    BlockTable t(pool);
    write(t, 1);
    EXPECT_EQ(t.blocks().size(), 1u);
    write(t, 15);
    EXPECT_EQ(t.blocks().size(), 1u) << "16 positions fill one block";
    write(t, 1);
    EXPECT_EQ(t.blocks().size(), 2u);
    write(t, 40);
    EXPECT_EQ(t.length(), 57);
    EXPECT_EQ(t.blocks().size(), 4u);
    EXPECT_EQ(pool.counts().referenced, 4);
    t.truncate(20);
    EXPECT_EQ(t.blocks().size(), 2u);
    EXPECT_EQ(pool.counts().free, 6);
  }
  EXPECT_EQ(pool.counts().free, 8) << "the table's destruction released its blocks";
}

TEST(BlockTable, RunningOutOfBlocksChangesNothing) {
  BlockPool pool(2, 4);
  BlockTable t(pool);
  write(t, 6);
  std::vector<BlockCopy> copies;
  EXPECT_FALSE(t.prepare_write(3, &copies));
  EXPECT_EQ(t.length(), 6);
  EXPECT_EQ(t.blocks().size(), 2u);
  EXPECT_TRUE(copies.empty());
  EXPECT_TRUE(t.prepare_write(2, &copies)) << "what still fits";
}

TEST(BlockTable, AForkSharesEveryBlockAndCopiesOnlyThePartialOneOnWrite) {
  BlockPool pool(8, 4);
  BlockTable parent(pool);
  write(parent, 10);  // blocks: full, full, 2 of 4
  BlockTable child = parent.fork();
  EXPECT_EQ(child.blocks().size(), 3u);
  for (BlockId id : parent.blocks()) EXPECT_EQ(pool.ref_count(id), 2);
  EXPECT_EQ(pool.counts().referenced, 3) << "nothing copied by forking";

  std::vector<BlockCopy> copies;
  write(child, 1, &copies);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].from, parent.blocks()[2]);
  EXPECT_EQ(copies[0].to, child.blocks()[2]);
  EXPECT_EQ(copies[0].rows, 2) << "the rows written before the fork";
  EXPECT_EQ(child.blocks()[0], parent.blocks()[0]);
  EXPECT_EQ(child.blocks()[1], parent.blocks()[1]);
  EXPECT_EQ(pool.ref_count(parent.blocks()[2]), 1);

  copies.clear();
  write(parent, 1, &copies);
  EXPECT_TRUE(copies.empty()) << "the parent holds the only reference to its partial block now";
  write(child, 8, &copies);
  EXPECT_TRUE(copies.empty()) << "new blocks past the shared ones need no copy";
}

TEST(BlockTable, AForkAtABlockBoundaryCopiesNothing) {
  BlockPool pool(8, 4);
  BlockTable parent(pool);
  write(parent, 8);
  BlockTable child = parent.fork();
  std::vector<BlockCopy> copies;
  write(child, 3, &copies);
  write(parent, 3, &copies);
  EXPECT_TRUE(copies.empty());
  EXPECT_NE(child.blocks()[2], parent.blocks()[2]);
}

TEST(BlockTable, MovingTransfersTheReferences) {
  BlockPool pool(4, 4);
  BlockTable a(pool);
  write(a, 5);
  BlockTable b(std::move(a));
  EXPECT_EQ(a.length(), 0);
  EXPECT_TRUE(a.blocks().empty());
  EXPECT_EQ(b.length(), 5);
  BlockTable c(pool);
  write(c, 4);
  c = std::move(b);  // c's own block goes back to the pool
  EXPECT_EQ(pool.counts().referenced, 2);
  EXPECT_EQ(c.length(), 5);
}

TEST(BlockTable, APromptReusesTheLongestCachedPrefixOfWholeBlocks) {
  BlockPool pool(16, 4);
  const uint64_t seed = 42;
  std::vector<int32_t> prompt = iota_tokens(14);
  {
    BlockTable first(pool);
    EXPECT_EQ(first.adopt_prefix(prompt, seed), 0) << "a cold cache";
    write(first, 14);
    first.publish_full_blocks(prompt, seed);
  }
  EXPECT_EQ(pool.counts().cached, 3) << "three full blocks stay cached after the chat ends";

  BlockTable same(pool);
  EXPECT_EQ(same.adopt_prefix(prompt, seed), 12);
  EXPECT_EQ(same.length(), 12);

  std::vector<int32_t> diverging = prompt;
  diverging[6] = 7;  // inside the second block
  BlockTable other(pool);
  EXPECT_EQ(other.adopt_prefix(diverging, seed), 4) << "only the first block matches";
  EXPECT_EQ(other.blocks()[0], same.blocks()[0]);

  BlockTable other_seed(pool);
  EXPECT_EQ(other_seed.adopt_prefix(prompt, seed + 1), 0) << "another model or KV type";

  std::vector<int32_t> exact(prompt.begin(), prompt.begin() + 12);
  BlockTable whole(pool);
  EXPECT_EQ(whole.adopt_prefix(exact, seed), 8) << "one token is always left to prefill";
}

TEST(BlockTable, WritingAfterATruncationIntoACachedBlockCopiesIt) {
  BlockPool pool(8, 4);
  const std::vector<int32_t> prompt = iota_tokens(8);
  BlockTable t(pool);
  write(t, 8);
  t.publish_full_blocks(prompt, 1);
  const BlockId cached = t.blocks()[1];
  t.truncate(6);  // Edit-and-resend: keep 6, write new tokens after them
  std::vector<BlockCopy> copies;
  write(t, 2, &copies);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].from, cached);
  EXPECT_EQ(copies[0].rows, 2);
  EXPECT_NE(t.blocks()[1], cached) << "the cached block keeps its published rows";
  BlockTable again(pool);
  EXPECT_EQ(again.adopt_prefix(iota_tokens(9), 1), 8) << "and is still found by its prefix";
}

// The sliding window's eviction: blocks leave the middle of the table, the later ones move
// down, private ones in place, a shared or keyed one by a copy (the fork and the prefix cache
// keep theirs).
TEST(BlockTable, DroppingBlocksMovesTheLaterOnesDownAndCopiesSharedOnes) {
  BlockPool pool(16, 4);
  BlockTable t(pool);
  write(t, 18);  // blocks 0..4, the last holding 2 rows
  const std::vector<BlockId> before(t.blocks().begin(), t.blocks().end());
  BlockTable fork = t.fork();
  std::vector<BlockCopy> copies;
  std::vector<BlockId> moved;
  ASSERT_TRUE(t.drop_blocks(1, 2, &copies, &moved));
  EXPECT_EQ(t.length(), 10);
  ASSERT_EQ(t.blocks().size(), 3u);
  EXPECT_EQ(t.blocks()[0], before[0]) << "blocks before the dropped ones stay";
  ASSERT_EQ(copies.size(), 2u) << "the fork shares both moving blocks";
  EXPECT_EQ(copies[0].from, before[3]);
  EXPECT_EQ(copies[0].rows, 4);
  EXPECT_EQ(copies[1].from, before[4]);
  EXPECT_EQ(copies[1].rows, 2) << "the partial last block copies its written rows";
  EXPECT_EQ(moved, (std::vector<BlockId>{copies[0].to, copies[1].to}));
  EXPECT_EQ(std::vector<BlockId>(fork.blocks().begin(), fork.blocks().end()), before) << "the fork is untouched";

  BlockPool solo_pool(8, 4);
  BlockTable solo(solo_pool);
  write(solo, 12);
  const BlockId last = solo.blocks()[2];
  copies.clear();
  moved.clear();
  ASSERT_TRUE(solo.drop_blocks(0, 1, &copies, &moved));
  EXPECT_TRUE(copies.empty()) << "private blocks move in place";
  EXPECT_EQ(moved.back(), last);
  EXPECT_EQ(solo_pool.counts().referenced, 2) << "the dropped block went back to the pool";
}

TEST(BlockTable, AMovedKeyedBlockLosesItsKeyAndTheBlocksBeforeKeepTheirs) {
  BlockPool pool(3, 4);  // no block to spare for a copy
  const auto tokens = iota_tokens(12);
  BlockTable t(pool);
  write(t, 12);
  t.publish_full_blocks(tokens, 7);
  std::vector<BlockCopy> copies;
  std::vector<BlockId> moved;
  ASSERT_TRUE(t.drop_blocks(1, 1, &copies, &moved));
  EXPECT_TRUE(copies.empty()) << "a private keyed block is rewritten in place, its key dropped";
  EXPECT_TRUE(pool.writable(moved[0]));
  t.truncate(0);
  BlockTable again(pool);
  EXPECT_EQ(again.adopt_prefix(iota_tokens(13), 7), 8)
      << "the dropped block stays cached under its key, the moved one is no longer found";
}

}  // namespace
}  // namespace inferscope
