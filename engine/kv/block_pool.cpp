#include "engine/kv/block_pool.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>

namespace inferscope {

namespace {

// splitmix64's finalizer: every input bit reaches every output bit.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

uint64_t block_key(uint64_t parent, std::span<const int32_t> tokens, uint64_t seed) {
  uint64_t h = mix(seed ^ mix(parent));
  for (int32_t t : tokens) h = mix(h ^ static_cast<uint32_t>(t));
  h = mix(h ^ tokens.size());
  return h == 0 ? 1 : h;  // 0 is "no parent"
}

uint64_t prefix_seed(std::span<const std::string_view> parts) {
  uint64_t h = 0;
  for (std::string_view part : parts) {
    for (unsigned char c : part) h = mix(h ^ c);
    h = mix(h ^ (0x100 | part.size()));  // separates "ab","c" from "a","bc"
  }
  return h;
}

BlockPool::BlockPool(int32_t n_blocks, int32_t block_size)
    : block_size_(block_size), cache_limit_(n_blocks), blocks_(static_cast<size_t>(n_blocks)) {
  assert(n_blocks >= 1 && block_size >= 1);
  free_.reserve(static_cast<size_t>(n_blocks));
  for (BlockId id = n_blocks - 1; id >= 0; --id) free_.push_back(id);
}

BlockCounts BlockPool::counts() const {
  BlockCounts c;
  c.free = static_cast<int32_t>(free_.size());
  c.cached = static_cast<int32_t>(cached_.size());
  c.referenced = n_blocks() - c.free - c.cached;
  return c;
}

void BlockPool::check_referenced(BlockId id, const char* what) const {
  if (id >= 0 && id < n_blocks() && blocks_[static_cast<size_t>(id)].refs > 0) return;
  // A bookkeeping bug, not bad input: continuing would hand one block to two sequences.
  std::fprintf(stderr, "BlockPool::%s: block %d is not referenced\n", what, static_cast<int>(id));
  std::abort();
}

std::optional<BlockId> BlockPool::allocate() {
  if (free_.empty() && !cached_.empty()) evict(cached_.front());
  if (free_.empty()) return std::nullopt;
  const BlockId id = free_.back();
  free_.pop_back();
  blocks_[static_cast<size_t>(id)].refs = 1;
  return id;
}

void BlockPool::retain(BlockId id) {
  check_referenced(id, "retain");
  ++blocks_[static_cast<size_t>(id)].refs;
}

void BlockPool::release(BlockId id) {
  check_referenced(id, "release");
  Block& b = blocks_[static_cast<size_t>(id)];
  if (--b.refs > 0) return;
  if (!b.keyed) {
    free_.push_back(id);
    return;
  }
  b.lru = cached_.insert(cached_.end(), id);
  trim_cache();
}

int32_t BlockPool::ref_count(BlockId id) const {
  return id >= 0 && id < n_blocks() ? blocks_[static_cast<size_t>(id)].refs : 0;
}

bool BlockPool::writable(BlockId id) const {
  check_referenced(id, "writable");
  const Block& b = blocks_[static_cast<size_t>(id)];
  return b.refs == 1 && !b.keyed;
}

void BlockPool::publish(BlockId id, uint64_t key, uint64_t parent, std::span<const int32_t> tokens) {
  check_referenced(id, "publish");
  Block& b = blocks_[static_cast<size_t>(id)];
  if (b.keyed || by_key_.count(key)) return;
  b.keyed = true;
  b.key = key;
  b.parent = parent;
  b.tokens.assign(tokens.begin(), tokens.end());
  by_key_.emplace(key, id);
}

void BlockPool::forget(BlockId id) {
  check_referenced(id, "forget");
  Block& b = blocks_[static_cast<size_t>(id)];
  if (b.refs != 1) {
    std::fprintf(stderr, "BlockPool::forget: block %d is held %d times\n", static_cast<int>(id), b.refs);
    std::abort();
  }
  if (!b.keyed) return;
  by_key_.erase(b.key);
  b.keyed = false;
  b.tokens.clear();
}

std::optional<BlockId> BlockPool::find(uint64_t key, uint64_t parent, std::span<const int32_t> tokens) const {
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return std::nullopt;
  const Block& b = blocks_[static_cast<size_t>(it->second)];
  if (b.parent != parent || !std::equal(tokens.begin(), tokens.end(), b.tokens.begin(), b.tokens.end())) {
    return std::nullopt;
  }
  return it->second;
}

std::optional<BlockId> BlockPool::lookup(uint64_t key, uint64_t parent, std::span<const int32_t> tokens) {
  ++lookups_;
  const std::optional<BlockId> found = find(key, parent, tokens);
  if (!found) return std::nullopt;
  Block& b = blocks_[static_cast<size_t>(*found)];
  if (b.refs == 0) cached_.erase(b.lru);
  ++b.refs;
  ++hits_;
  return found;
}

void BlockPool::set_cache_limit(int32_t blocks) {
  cache_limit_ = blocks < 0 ? 0 : blocks;
  trim_cache();
}

void BlockPool::evict(BlockId id) {
  Block& b = blocks_[static_cast<size_t>(id)];
  cached_.erase(b.lru);
  by_key_.erase(b.key);
  b.keyed = false;
  b.tokens.clear();
  free_.push_back(id);
}

void BlockPool::trim_cache() {
  while (static_cast<int32_t>(cached_.size()) > cache_limit_) evict(cached_.front());
}

}  // namespace inferscope
