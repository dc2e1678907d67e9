#include "engine/kv/block_table.h"

#include <algorithm>
#include <cassert>
#include <utility>

namespace inferscope {

BlockTable::BlockTable(BlockTable&& other) noexcept
    : pool_(other.pool_), blocks_(std::move(other.blocks_)), keys_(std::move(other.keys_)), length_(other.length_) {
  other.blocks_.clear();
  other.keys_.clear();
  other.length_ = 0;
}

BlockTable& BlockTable::operator=(BlockTable&& other) noexcept {
  if (this == &other) return *this;
  release_all();
  pool_ = other.pool_;
  blocks_ = std::move(other.blocks_);
  keys_ = std::move(other.keys_);
  length_ = other.length_;
  other.blocks_.clear();
  other.keys_.clear();
  other.length_ = 0;
  return *this;
}

BlockTable BlockTable::fork() const {
  BlockTable copy(*pool_);
  for (BlockId id : blocks_) {
    if (id != kNoBlock) pool_->retain(id);
  }
  copy.blocks_ = blocks_;
  copy.keys_ = keys_;
  copy.length_ = length_;
  return copy;
}

bool BlockTable::prepare_write(int64_t n, std::vector<BlockCopy>* copies) {
  if (n <= 0) return true;
  const int64_t bs = block_size();
  const size_t first = static_cast<size_t>(length_ / bs);
  const size_t needed = static_cast<size_t>((length_ + n + bs - 1) / bs);
  // The block holding position length_ when it is partly written and may not be written in
  // place, then every block past the table's end.
  const bool copy_partial = length_ % bs != 0 && !pool_->writable(blocks_[first]);
  std::vector<BlockId> fresh;
  const size_t wanted = (needed > blocks_.size() ? needed - blocks_.size() : 0) + (copy_partial ? 1 : 0);
  for (size_t i = 0; i < wanted; ++i) {
    auto id = pool_->allocate();
    if (!id) {
      for (BlockId f : fresh) pool_->release(f);
      return false;
    }
    fresh.push_back(*id);
  }
  size_t next = 0;
  if (copy_partial) {
    const BlockId copy = fresh[next++];
    copies->push_back({blocks_[first], copy, static_cast<int32_t>(length_ % bs)});
    pool_->release(blocks_[first]);
    blocks_[first] = copy;
  }
  while (next < fresh.size()) blocks_.push_back(fresh[next++]);
  return true;
}

void BlockTable::commit(int64_t n) {
  assert(n >= 0 && length_ + n <= static_cast<int64_t>(blocks_.size()) * block_size());
  length_ += n;
}

void BlockTable::truncate(int64_t n) {
  assert(n >= 0 && n <= length_);
  const size_t keep = static_cast<size_t>((n + block_size() - 1) / block_size());
  while (blocks_.size() > keep) {
    if (blocks_.back() != kNoBlock) pool_->release(blocks_.back());
    blocks_.pop_back();
  }
  if (keys_.size() > static_cast<size_t>(n / block_size())) keys_.resize(static_cast<size_t>(n / block_size()));
  length_ = n;
}

bool BlockTable::drop_blocks(size_t first, size_t count, std::vector<BlockCopy>* copies,
                             std::vector<BlockId>* moved) {
  assert(static_cast<int64_t>(first + count) * block_size() <= length_);
  const size_t tail = first + count;
  std::vector<size_t> shared;
  for (size_t i = tail; i < blocks_.size(); ++i) {
    if (blocks_[i] != kNoBlock && pool_->ref_count(blocks_[i]) > 1) shared.push_back(i);
  }
  std::vector<BlockId> fresh;
  for (size_t i = 0; i < shared.size(); ++i) {
    auto id = pool_->allocate();
    if (!id) {
      for (BlockId f : fresh) pool_->release(f);
      return false;
    }
    fresh.push_back(*id);
  }
  const int64_t bs = block_size();
  for (size_t i = 0; i < shared.size(); ++i) {
    const size_t at = shared[i];
    const int64_t rows = std::min<int64_t>(bs, length_ - static_cast<int64_t>(at) * bs);
    copies->push_back({blocks_[at], fresh[i], static_cast<int32_t>(rows)});
    pool_->release(blocks_[at]);
    blocks_[at] = fresh[i];
  }
  for (size_t i = tail; i < blocks_.size(); ++i) {
    if (blocks_[i] != kNoBlock) pool_->forget(blocks_[i]);
  }
  for (size_t i = first; i < tail; ++i) {
    if (blocks_[i] != kNoBlock) pool_->release(blocks_[i]);
  }
  blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(first), blocks_.begin() + static_cast<std::ptrdiff_t>(tail));
  for (size_t i = first; i < blocks_.size(); ++i) {
    if (blocks_[i] != kNoBlock) moved->push_back(blocks_[i]);
  }
  if (keys_.size() > first) keys_.resize(first);
  length_ -= static_cast<int64_t>(count) * bs;
  return true;
}

void BlockTable::release_front(size_t end) {
  for (size_t i = 0; i < std::min(end, blocks_.size()); ++i) {
    if (blocks_[i] != kNoBlock) pool_->release(blocks_[i]);
    blocks_[i] = kNoBlock;
  }
}

int64_t BlockTable::first_held() const {
  const auto held = std::find_if(blocks_.begin(), blocks_.end(), [](BlockId id) { return id != kNoBlock; });
  return std::min<int64_t>(length_, (held - blocks_.begin()) * block_size());
}

void BlockTable::release_all() {
  for (BlockId id : blocks_) {
    if (id != kNoBlock) pool_->release(id);
  }
  blocks_.clear();
  keys_.clear();
  length_ = 0;
}

int64_t BlockTable::adopt_prefix(std::span<const int32_t> tokens, uint64_t seed) {
  assert(length_ == 0 && blocks_.empty());
  const int64_t bs = block_size();
  const int64_t reusable = (static_cast<int64_t>(tokens.size()) - 1) / bs;  // leave a token to prefill
  uint64_t parent = 0;
  for (int64_t b = 0; b < reusable; ++b) {
    const auto block_tokens = tokens.subspan(static_cast<size_t>(b * bs), static_cast<size_t>(bs));
    const uint64_t key = block_key(parent, block_tokens, seed);
    auto id = pool_->lookup(key, parent, block_tokens);
    if (!id) break;
    blocks_.push_back(*id);
    keys_.push_back(key);
    parent = key;
  }
  length_ = static_cast<int64_t>(blocks_.size()) * bs;
  return length_;
}

namespace {

// The keys of the first n_blocks blocks of `tokens`, each chained from the one before.
std::vector<uint64_t> prefix_keys(std::span<const int32_t> tokens, uint64_t seed, size_t n_blocks, int64_t bs) {
  std::vector<uint64_t> keys;
  uint64_t parent = 0;
  for (size_t b = 0; b < n_blocks; ++b) {
    parent = block_key(parent, tokens.subspan(b * static_cast<size_t>(bs), static_cast<size_t>(bs)), seed);
    keys.push_back(parent);
  }
  return keys;
}

}  // namespace

bool BlockTable::adopt_blocks(std::span<const int32_t> tokens, uint64_t seed, size_t first, size_t end) {
  assert(length_ == 0 && blocks_.empty() && first <= end);
  const int64_t bs = block_size();
  assert(static_cast<int64_t>(tokens.size()) >= static_cast<int64_t>(end) * bs);
  keys_ = prefix_keys(tokens, seed, end, bs);
  blocks_.assign(first, kNoBlock);
  for (size_t b = first; b < end; ++b) {
    const auto block_tokens = tokens.subspan(b * static_cast<size_t>(bs), static_cast<size_t>(bs));
    auto id = pool_->lookup(keys_[b], b == 0 ? 0 : keys_[b - 1], block_tokens);
    if (!id) {
      release_all();
      return false;
    }
    blocks_.push_back(*id);
  }
  length_ = static_cast<int64_t>(end) * bs;
  return true;
}

std::vector<bool> BlockTable::cached_blocks(std::span<const int32_t> tokens, uint64_t seed, size_t n_blocks) const {
  const int64_t bs = block_size();
  const std::vector<uint64_t> keys = prefix_keys(tokens, seed, n_blocks, bs);
  std::vector<bool> cached(n_blocks);
  for (size_t b = 0; b < n_blocks; ++b) {
    const auto block_tokens = tokens.subspan(b * static_cast<size_t>(bs), static_cast<size_t>(bs));
    cached[b] = pool_->holds(keys[b], b == 0 ? 0 : keys[b - 1], block_tokens);
  }
  return cached;
}

void BlockTable::publish_full_blocks(std::span<const int32_t> tokens, uint64_t seed) {
  assert(static_cast<int64_t>(tokens.size()) >= length_);
  const int64_t bs = block_size();
  for (size_t b = keys_.size(); static_cast<int64_t>(b + 1) * bs <= length_; ++b) {
    const auto block_tokens = tokens.subspan(b * static_cast<size_t>(bs), static_cast<size_t>(bs));
    const uint64_t parent = b == 0 ? 0 : keys_[b - 1];
    const uint64_t key = block_key(parent, block_tokens, seed);
    if (blocks_[b] != kNoBlock) pool_->publish(blocks_[b], key, parent, block_tokens);
    keys_.push_back(key);
  }
}

}  // namespace inferscope
