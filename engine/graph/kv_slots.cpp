#include "engine/graph/kv_slots.h"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace inferscope {

KvSlots::KvSlots(BackendOps& ops, const KvLayout& kv, const KvSlotsOptions& options)
    : ops_(ops), options_(options),
      pool_(std::make_unique<BlockPool>(static_cast<int32_t>(kv.n_blocks), kv.block_size)) {
  for (int s = 0; s < options.n_slots; ++s) tables_.emplace_back(*pool_);
  if (kv.has_window_pool()) {
    window_pool_ = std::make_unique<BlockPool>(static_cast<int32_t>(kv.window_blocks), kv.block_size);
    for (int s = 0; s < options.n_slots; ++s) window_tables_.emplace_back(*window_pool_);
  }
  slots_.resize(static_cast<size_t>(options.n_slots));
}

Result<std::unique_ptr<KvSlots>> KvSlots::create(BackendOps& ops, const KvLayout& kv, const KvSlotsOptions& options) {
  if (options.n_slots < 1) return Status::error("at least one sequence slot is needed");
  const int64_t window = options.kv_window, sinks = options.kv_sinks;
  if (window < 0 || sinks < 0) return Status::error("the KV window and its sinks must be >= 0");
  if (kv.has_window_pool() && (window > 0 || options.layer_window <= 0)) {
    return Status::error("internal: a window pool needs the layers' window, and no --kv-window");
  }
  auto slots = std::unique_ptr<KvSlots>(new KvSlots(ops, kv, options));
  if (window == 0) return slots;
  const int64_t bs = kv.block_size;
  const int64_t step = std::max<int64_t>(1, window / (4 * bs));
  const int64_t needed = (slots->sink_blocks() + step + 1) * bs + window;
  if (needed > options.n_ctx) {
    return Status::error("--kv-window " + std::to_string(window) + " with " + std::to_string(sinks) +
                         " sinks needs a context of at least " + std::to_string(needed) + " positions (the context is " +
                         std::to_string(options.n_ctx) + ")");
  }
  return slots;
}

Status KvSlots::check_depth(int slot, int64_t n_layers) const {
  const ShallowRows& shallow = slots_[static_cast<size_t>(slot)].shallow;
  if (!shallow.any() || n_layers <= shallow.layers) return Status::ok();
  return Status::error("internal: positions " + std::to_string(shallow.from) + " to " + std::to_string(length(slot) - 1) +
                       " of slot " + std::to_string(slot) + " hold the KV of their first " +
                       std::to_string(shallow.layers) + " layers only (a self-draft's); truncate them before a call through " +
                       std::to_string(n_layers) + " layers");
}

// Blocks holding the attention sinks (kept by the window and by context shift).
int64_t KvSlots::sink_blocks() const {
  const int64_t bs = pool_->block_size();
  return (options_.kv_sinks + bs - 1) / bs;
}

// Drops the blocks after the sinks that no query sees any more (every row more than kv_window
// behind the next position), once they are a quarter window's worth (each kept key is
// re-rotated about four times in its life) or the context needs the room.
Status KvSlots::slide_window(int slot, int64_t n) {
  const int64_t window = options_.kv_window;
  if (window == 0) return Status::ok();
  const int64_t bs = pool_->block_size(), held = length(slot);
  const int64_t dead = std::max<int64_t>(0, std::max<int64_t>(0, held - window + 1) / bs - sink_blocks());
  if (dead == 0) return Status::ok();
  const int64_t step = std::max<int64_t>(1, window / (4 * bs));
  if (dead < step && held + n <= options_.n_ctx) return Status::ok();
  return drop_blocks(slot, static_cast<size_t>(sink_blocks()), static_cast<size_t>(dead));
}

Status KvSlots::shift_context(int slot) {
  if (slot < 0 || slot >= n_slots()) return Status::error("sequence slot out of range");
  if (slots_[static_cast<size_t>(slot)].shallow.any()) {
    return Status::error("internal: context shift with a self-draft's positions in the slot (truncate them first)");
  }
  const int64_t full = length(slot) / pool_->block_size();
  const int64_t drop = (full - sink_blocks()) / 2;
  if (drop < 1) return Status::error("context shift: no whole block after the attention sinks to drop");
  return drop_blocks(slot, static_cast<size_t>(sink_blocks()), static_cast<size_t>(drop));
}

// The blocks after `first` move down: their keys are re-rotated for their new positions.
Status KvSlots::drop_table_blocks(BlockTable& table, KvPool pool, size_t first, size_t count) {
  std::vector<BlockCopy> copies;
  std::vector<BlockId> moved;
  if (!table.drop_blocks(first, count, &copies, &moved)) {
    return Status::error("the KV cache has no free block to move a shared block of the sliding window into");
  }
  if (!copies.empty()) INFERSCOPE_RETURN_IF_ERROR(ops_.kv_copy(pool, copies));
  const int64_t bs = table.block_size();
  if (!moved.empty()) INFERSCOPE_RETURN_IF_ERROR(ops_.kv_rotate(pool, moved, -static_cast<int64_t>(count) * bs));
  return Status::ok();
}

Status KvSlots::drop_blocks(int slot, size_t first, size_t count) {
  const auto i = static_cast<size_t>(slot);
  INFERSCOPE_RETURN_IF_ERROR(drop_table_blocks(tables_[i], KvPool::Main, first, count));
  if (window_pool_) INFERSCOPE_RETURN_IF_ERROR(drop_table_blocks(window_tables_[i], KvPool::Window, first, count));
  const int64_t bs = pool_->block_size();
  Slot& s = slots_[static_cast<size_t>(slot)];
  s.tokens.erase(s.tokens.begin() + static_cast<std::ptrdiff_t>(first) * bs,
                 s.tokens.begin() + static_cast<std::ptrdiff_t>(first + count) * bs);
  s.shifted = true;
  return Status::ok();
}

Status KvSlots::make_writable(BlockTable& table, KvPool pool, int64_t n) {
  std::vector<BlockCopy> copies;
  if (!table.prepare_write(n, &copies)) {
    const BlockPool& blocks = pool == KvPool::Window ? *window_pool_ : *pool_;
    const BlockCounts c = blocks.counts();
    return Status::error(std::string("the KV cache") + (pool == KvPool::Window ? "'s window pool" : "") +
                         " has no free block for " + std::to_string(n) + " more positions (" +
                         std::to_string(c.referenced) + " of " + std::to_string(blocks.n_blocks()) +
                         " blocks in use)");
  }
  return copies.empty() ? Status::ok() : ops_.kv_copy(pool, copies);
}

Status KvSlots::make_writable(int slot, int64_t n) {
  const auto i = static_cast<size_t>(slot);
  INFERSCOPE_RETURN_IF_ERROR(make_writable(tables_[i], KvPool::Main, n));
  return window_pool_ ? make_writable(window_tables_[i], KvPool::Window, n) : Status::ok();
}

// The window pool's first block a query at position `length` (or later) sees.
int64_t KvSlots::first_window_block(int64_t length) const {
  return std::max<int64_t>(0, length - options_.layer_window + 1) / pool_->block_size();
}

// Lets go of the window-pool blocks more than a chunk's worth behind every query to come.
void KvSlots::release_unseen_window_blocks(int slot) {
  BlockTable& window = window_tables_[static_cast<size_t>(slot)];
  window.release_front(static_cast<size_t>(first_window_block(window.length() - options_.window_margin)));
}

void KvSlots::commit(int slot, std::span<const int32_t> tokens, int64_t n_layers) {
  BlockTable& table = tables_[static_cast<size_t>(slot)];
  Slot& s = slots_[static_cast<size_t>(slot)];
  if (n_layers < options_.n_layer) {
    s.shallow = !s.shallow.any() ? ShallowRows{table.length(), n_layers}
                                      : ShallowRows{s.shallow.from, std::min(s.shallow.layers, n_layers)};
  }
  table.commit(static_cast<int64_t>(tokens.size()));
  s.tokens.insert(s.tokens.end(), tokens.begin(), tokens.end());
  // An encoder's keys depend on the tokens after them too: never a reusable prefix.
  const bool reusable = options_.causal && !s.shifted && !s.shallow.any();
  if (reusable) table.publish_full_blocks(s.tokens, options_.prefix_seed);
  if (!window_pool_) return;
  BlockTable& window = window_tables_[static_cast<size_t>(slot)];
  window.commit(static_cast<int64_t>(tokens.size()));
  if (reusable) window.publish_full_blocks(s.tokens, options_.prefix_seed);
  release_unseen_window_blocks(slot);
}

void KvSlots::truncate(int slot, int64_t length) {
  BlockTable& t = tables_[static_cast<size_t>(slot)];
  Slot& s = slots_[static_cast<size_t>(slot)];
  int64_t n = std::clamp<int64_t>(length, 0, t.length());
  if (window_pool_) {
    BlockTable& window = window_tables_[static_cast<size_t>(slot)];
    if (window.first_held() > first_window_block(n) * pool_->block_size()) n = 0;  // its window is gone
    window.truncate(n);
  }
  t.truncate(n);
  s.tokens.resize(static_cast<size_t>(n));
  if (n == 0) s.shifted = false;
  if (n <= s.shallow.from) s.shallow = {};
}

void KvSlots::clear_with_prefixes() {
  for (int s = 0; s < n_slots(); ++s) truncate(s, 0);
  for (BlockPool* pool : {pool_.get(), window_pool_.get()}) {
    if (!pool) continue;
    const int32_t limit = pool->cache_limit();
    pool->set_cache_limit(0);
    pool->set_cache_limit(limit);
  }
}

int64_t KvSlots::reuse_prefix(int slot, std::span<const int32_t> tokens) {
  truncate(slot, 0);  // its full blocks stay cached, keyed by their prefix
  int64_t n = tables_[static_cast<size_t>(slot)].adopt_prefix(tokens, options_.prefix_seed);
  if (window_pool_) n = adopt_window(slot, tokens, n);
  slots_[static_cast<size_t>(slot)].tokens.assign(tokens.begin(), tokens.begin() + n);
  return n;
}

// The longest of the slot's n adopted positions (whole blocks) whose last window the window
// pool still has cached: the window table takes those blocks, the main table is cut to match.
int64_t KvSlots::adopt_window(int slot, std::span<const int32_t> tokens, int64_t n) {
  const int64_t bs = pool_->block_size();
  BlockTable& window = window_tables_[static_cast<size_t>(slot)];
  const std::vector<bool> cached = window.cached_blocks(tokens, options_.prefix_seed, static_cast<size_t>(n / bs));
  int64_t best = 0, run = 0;  // run: cached blocks ending at block b
  for (int64_t b = 0; b < static_cast<int64_t>(cached.size()); ++b) {
    run = cached[static_cast<size_t>(b)] ? run + 1 : 0;
    if (run >= b + 1 - first_window_block((b + 1) * bs)) best = b + 1;
  }
  if (!window.adopt_blocks(tokens, options_.prefix_seed, static_cast<size_t>(first_window_block(best * bs)),
                           static_cast<size_t>(best))) {
    best = 0;
  }
  tables_[static_cast<size_t>(slot)].truncate(best * bs);
  return best * bs;
}

// Slot i becomes a fork of slot parents[i]: it shares the parent's blocks, copied only when
// written (the partial last block).
Status KvSlots::reorder(std::span<const int32_t> parents) {
  if (parents.size() != tables_.size()) return Status::error("reorder needs one parent per slot");
  for (int32_t p : parents) {
    if (p < 0 || p >= n_slots()) return Status::error("reorder parent out of range");
  }
  std::vector<BlockTable> forks, window_forks;
  std::vector<Slot> slots;
  forks.reserve(tables_.size());
  for (int32_t p : parents) {
    forks.push_back(tables_[static_cast<size_t>(p)].fork());
    if (window_pool_) window_forks.push_back(window_tables_[static_cast<size_t>(p)].fork());
    slots.push_back(slots_[static_cast<size_t>(p)]);
  }
  tables_ = std::move(forks);
  window_tables_ = std::move(window_forks);
  slots_ = std::move(slots);
  return Status::ok();
}

KvBlockStats KvSlots::stats() const {
  const BlockCounts c = pool_->counts();
  KvBlockStats s{pool_->block_size(), c.referenced, c.cached, c.free, 0, 0, pool_->hits(), pool_->lookups()};
  // A block shared by several slots counts once, with the most rows any of them uses.
  std::unordered_map<BlockId, int64_t> used_rows;
  const int64_t bs = pool_->block_size();
  for (const BlockTable& t : tables_) {
    for (size_t i = 0; i < t.blocks().size(); ++i) {
      int64_t& rows = used_rows[t.blocks()[i]];
      rows = std::max(rows, std::clamp<int64_t>(t.length() - static_cast<int64_t>(i) * bs, 0, bs));
    }
  }
  for (const auto& [id, rows] : used_rows) s.positions_held += rows;
  s.positions_in_blocks = static_cast<int64_t>(used_rows.size()) * bs;
  return s;
}

}  // namespace inferscope
