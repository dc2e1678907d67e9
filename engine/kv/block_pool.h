// The bookkeeping of paged KV memory, shared by every backend: a pool of n_blocks blocks of
// block_size positions each. A backend owns the storage (per layer, block b holds the K and V
// rows of positions [b * block_size, (b + 1) * block_size) of whatever sequence owns it); the
// pool only says which block is whose.
//
// A block is in one of three states:
//   free       no content anyone can use;
//   referenced held by one or more sequences (their BlockTables), ref_count() > 0;
//   cached     no longer referenced, but full and keyed by its prefix (publish): a later prompt
//              with the same prefix takes it back (lookup) instead of prefilling it again.
// allocate() takes a free block, or when there is none evicts the least recently released
// cached one. At most cache_limit blocks stay cached: releasing one more evicts the oldest.
//
// Prefix keys chain: a block's key hashes its parent's key, its tokens and a seed naming
// everything else its contents depend on (model file, KV types, RoPE settings, block size:
// prefix_seed). A lookup compares the tokens and the parent key too, so a hash collision can
// never hand out a block of other contents.
#pragma once

#include <cstdint>
#include <list>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace inferscope {

using BlockId = int32_t;
// A block table's entry for positions whose block it let go of (a window pool's table).
constexpr BlockId kNoBlock = -1;

// The key of a block of `tokens` after the block keyed `parent` (0 for the first block).
uint64_t block_key(uint64_t parent, std::span<const int32_t> tokens, uint64_t seed);
// A seed from the strings that identify what a block's contents depend on.
uint64_t prefix_seed(std::span<const std::string_view> parts);

struct BlockCounts {
  int32_t referenced = 0;
  int32_t cached = 0;
  int32_t free = 0;
};

class BlockPool {
 public:
  // Preconditions: n_blocks >= 1, block_size >= 1.
  BlockPool(int32_t n_blocks, int32_t block_size);
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  int32_t n_blocks() const { return static_cast<int32_t>(blocks_.size()); }
  int32_t block_size() const { return block_size_; }
  BlockCounts counts() const;

  // A block with ref_count 1 and no key; nullopt when every block is referenced.
  std::optional<BlockId> allocate();
  // One more reference (a fork sharing the block). Precondition: ref_count(id) > 0.
  void retain(BlockId id);
  // One reference less; at none the block becomes cached if it has a key, else free.
  // Precondition: ref_count(id) > 0 (checked: releasing an unreferenced block aborts).
  void release(BlockId id);
  int32_t ref_count(BlockId id) const;
  // Whether a sequence may write rows of the block in place: it holds the only reference and
  // the block is not keyed (a keyed block's rows are what its key says; writes go to a copy).
  bool writable(BlockId id) const;

  // Keys a full, referenced block by its prefix, so that lookup() finds it once released (or
  // while still held). A block keyed already, or a key already used, is left as it is.
  void publish(BlockId id, uint64_t key, uint64_t parent, std::span<const int32_t> tokens);
  // Takes the key off a block its one holder is about to rewrite (the sliding window re-rotates
  // its rows): later lookups no longer find it. Precondition: ref_count(id) == 1 (checked).
  void forget(BlockId id);
  // The block keyed `key` with these tokens after `parent`, retained for the caller; nullopt
  // when none is (never published, or evicted since).
  std::optional<BlockId> lookup(uint64_t key, uint64_t parent, std::span<const int32_t> tokens);
  // Whether lookup() would find that block (nothing retained, nothing counted).
  bool holds(uint64_t key, uint64_t parent, std::span<const int32_t> tokens) const {
    return find(key, parent, tokens).has_value();
  }

  // How many unreferenced blocks stay cached (the rest are evicted, oldest first); default: all.
  void set_cache_limit(int32_t blocks);
  int32_t cache_limit() const { return cache_limit_; }
  // Lookups that found their block, and all lookups, since the pool was made.
  int64_t hits() const { return hits_; }
  int64_t lookups() const { return lookups_; }

 private:
  struct Block {
    int32_t refs = 0;
    bool keyed = false;
    uint64_t key = 0, parent = 0;
    std::vector<int32_t> tokens;
    std::list<BlockId>::iterator lru;  // valid while cached
  };
  std::optional<BlockId> find(uint64_t key, uint64_t parent, std::span<const int32_t> tokens) const;
  void check_referenced(BlockId id, const char* what) const;
  void evict(BlockId id);
  void trim_cache();

  int32_t block_size_;
  int32_t cache_limit_;
  std::vector<Block> blocks_;
  std::vector<BlockId> free_;            // a stack: the lowest ids are handed out first
  std::list<BlockId> cached_;            // least recently released first
  std::unordered_map<uint64_t, BlockId> by_key_;
  int64_t hits_ = 0, lookups_ = 0;
};

}  // namespace inferscope
