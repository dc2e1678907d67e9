// One sequence's KV blocks in position order (engine/kv/block_pool.h): position p lives at row
// p % block_size of block blocks()[p / block_size]. The table holds one reference to each of
// its blocks and gives it back when it drops the block (truncate, destruction, assignment), so
// a block cannot be used through a table after its release. fork() shares every block; a
// write into a shared or keyed block goes to a private copy first (copy-on-write), whose rows
// the backend copies as prepare_write() lists them. A window pool's table lets go of the blocks
// its layers no longer see (release_front): their entries become kNoBlock, never read.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/kv/block_pool.h"

namespace inferscope {

// Rows [0, rows) of every layer of block `from` to copy into block `to`.
struct BlockCopy {
  BlockId from = 0;
  BlockId to = 0;
  int32_t rows = 0;
};

class BlockTable {
 public:
  explicit BlockTable(BlockPool& pool) : pool_(&pool) {}
  ~BlockTable() { release_all(); }
  BlockTable(BlockTable&& other) noexcept;
  BlockTable& operator=(BlockTable&& other) noexcept;
  BlockTable(const BlockTable&) = delete;
  BlockTable& operator=(const BlockTable&) = delete;

  // A table of the same positions sharing every block.
  BlockTable fork() const;

  std::span<const BlockId> blocks() const { return blocks_; }
  int64_t length() const { return length_; }  // positions held
  int32_t block_size() const { return pool_->block_size(); }

  // Makes positions [length(), length() + n) writable: allocates the blocks they fall in, and
  // replaces a shared or keyed block among them by a copy, appending to `copies` the rows the
  // backend must copy. False, with the table as it was, when the pool runs out of blocks.
  bool prepare_write(int64_t n, std::vector<BlockCopy>* copies);
  // The backend wrote positions [length(), length() + n). Precondition: prepare_write(n).
  void commit(int64_t n);
  // Keeps positions [0, n) (n <= length()) and releases the blocks past them.
  void truncate(int64_t n);
  // Releases the blocks before index `end`, leaving kNoBlock in their entries.
  void release_front(size_t end);
  // The first position whose block the table still holds (0 unless release_front()).
  int64_t first_held() const;

  // Removes the `count` full blocks from index `first` on: the positions after them move down
  // by count * block_size (the sliding window's eviction, context shift). The blocks that move
  // are made private first: a shared one is replaced by a copy, whose rows are appended to
  // `copies`, and a keyed one loses its key (the prefix cache no longer offers it); `moved`
  // receives the moved blocks (their keys need re-rotating). The table keeps the keys of the
  // blocks before `first` only. False, with the table as it was,
  // when the pool has no block for a copy. Precondition: (first + count) * block_size <= length().
  bool drop_blocks(size_t first, size_t count, std::vector<BlockCopy>* copies, std::vector<BlockId>* moved);

  // Prefix cache. `tokens` are the sequence's token ids from position 0; `seed` names what the
  // contents depend on (prefix_seed). Starting from an empty table, takes the cached blocks of
  // the longest prefix of whole blocks, leaving at least one token to prefill (its logits are
  // the reply's first); returns the positions reused.
  int64_t adopt_prefix(std::span<const int32_t> tokens, uint64_t seed);
  // Starting from an empty table: the cached blocks [first, end) of the prefix of `tokens`, the
  // entries before them kNoBlock; false, with the table empty, when one is not cached.
  // Precondition: tokens.size() >= end * block_size().
  bool adopt_blocks(std::span<const int32_t> tokens, uint64_t seed, size_t first, size_t end);
  // Whether the pool has each of the first n_blocks blocks of `tokens`' prefix cached (or held).
  std::vector<bool> cached_blocks(std::span<const int32_t> tokens, uint64_t seed, size_t n_blocks) const;
  // Keys the table's full blocks not keyed yet, for later prompts to find. tokens.size() >=
  // length().
  void publish_full_blocks(std::span<const int32_t> tokens, uint64_t seed);

 private:
  void release_all();

  BlockPool* pool_;
  std::vector<BlockId> blocks_;
  std::vector<uint64_t> keys_;  // the keys of the first keys_.size() blocks (all full)
  int64_t length_ = 0;
};

}  // namespace inferscope
