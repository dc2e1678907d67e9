// The sequences' KV positions as the forward pass keeps them: a pool of blocks whose rows the
// backend stores (engine/kv/block_pool.h), each slot's block table and the tokens of its
// positions, and every policy that moves blocks: copy-on-write of shared blocks (forks, beam
// search), the prefix cache, StreamingLLM's window with its attention sinks, context shift, and
// the shallow rows a self-draft leaves. The rows themselves are copied and re-rotated through
// the backend's kv_copy and kv_rotate.
//
// With a window pool (KvLayout::has_window_pool) each slot has a second table, of the
// sliding-window layers' blocks, over the same positions: it lets go of the blocks no query of
// those layers sees any more, a chunk's worth behind the window (what a speculative decoder may
// truncate back over). A slot cannot be truncated to a length whose window it let go of (it is
// emptied instead), and a cached prefix is reused as far as the window pool still has the
// blocks of its last window.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/backend/backend_ops.h"
#include "engine/core/status.h"
#include "engine/graph/forward_executor.h"
#include "engine/kv/block_pool.h"
#include "engine/kv/block_table.h"

namespace inferscope {

struct KvSlotsOptions {
  int n_slots = 1;
  int64_t n_ctx = 0;      // positions a slot holds at most
  int64_t n_layer = 0;    // the model's layers (a self-draft's rows hold fewer)
  bool causal = true;     // false (an encoder): a block's rows depend on later tokens, never reused
  int64_t kv_window = 0;  // ForwardOptions::kv_window, kv_sinks
  int64_t kv_sinks = 0;
  uint64_t prefix_seed = 0;  // what cached blocks' contents depend on besides their tokens
  // With a window pool: the sliding-window layers' window, and how many positions behind it
  // stay held (a chunk's worth).
  int64_t layer_window = 0;
  int64_t window_margin = 0;
};

class KvSlots {
 public:
  // The window needs room in the context for its sink blocks, the window, the blocks waiting to
  // leave and one block being written; the error says how much. `ops` must outlive the slots.
  static Result<std::unique_ptr<KvSlots>> create(BackendOps& ops, const KvLayout& kv, const KvSlotsOptions& options);

  int n_slots() const { return static_cast<int>(tables_.size()); }
  int64_t length(int slot) const { return tables_[static_cast<size_t>(slot)].length(); }
  // The tokens of the slot's positions, and whether blocks left it (a window, a context shift):
  // then its positions no longer hold all it was given.
  std::span<const int32_t> tokens(int slot) const { return slots_[static_cast<size_t>(slot)].tokens; }
  bool shifted(int slot) const { return slots_[static_cast<size_t>(slot)].shifted; }
  const BlockTable& table(int slot) const { return tables_[static_cast<size_t>(slot)]; }
  // The slot's window-pool table; null without a window pool.
  const BlockTable* window_table(int slot) const {
    return window_pool_ ? &window_tables_[static_cast<size_t>(slot)] : nullptr;
  }
  int64_t window() const { return options_.kv_window; }
  int64_t sinks() const { return options_.kv_sinks; }
  // An empty table of a pool, for a chunk recorded but never run (ForwardPass's warm-up).
  // Precondition: the pool exists.
  BlockTable scratch_table(KvPool pool) { return BlockTable(pool == KvPool::Window ? *window_pool_ : *pool_); }

  // Fails when the slot's positions from a self-draft hold fewer layers than n_layers (an MTP
  // draft's hold none of the model's).
  Status check_depth(int slot, int64_t n_layers) const;
  // Before n more positions of `slot` with a window: drops the blocks no query sees any more.
  Status slide_window(int slot, int64_t n);
  // Gives the table (of `pool`) the blocks its next n positions go to, copying a shared block
  // written into.
  Status make_writable(BlockTable& table, KvPool pool, int64_t n);
  Status make_writable(int slot, int64_t n);
  // The slot's next tokens.size() positions hold the KV rows of its first n_layers layers (0:
  // an MTP draft's, its block's only); full blocks whose every row has every layer are offered
  // to the prefix cache.
  void commit(int slot, std::span<const int32_t> tokens, int64_t n_layers);

  Status shift_context(int slot);
  void truncate(int slot, int64_t length);
  // Empties every slot and evicts every cached block.
  void clear_with_prefixes();
  int64_t reuse_prefix(int slot, std::span<const int32_t> tokens);
  Status reorder(std::span<const int32_t> parents);
  KvBlockStats stats() const;

 private:
  KvSlots(BackendOps& ops, const KvLayout& kv, const KvSlotsOptions& options);
  Status drop_blocks(int slot, size_t first, size_t count);
  Status drop_table_blocks(BlockTable& table, KvPool pool, size_t first, size_t count);
  int64_t sink_blocks() const;
  void release_unseen_window_blocks(int slot);
  int64_t first_window_block(int64_t length) const;
  int64_t adopt_window(int slot, std::span<const int32_t> tokens, int64_t n);

  // Positions a self-draft appended (forward_layers), from `from` on, hold the KV rows of their
  // first `layers` layers only (0 for an MTP draft's: its block's only); from < 0: none do.
  struct ShallowRows {
    int64_t from = -1;
    int64_t layers = 0;
    bool any() const { return from >= 0; }
  };
  // One slot: its blocks and the positions it holds, their tokens, whether blocks left the
  // cache (window, context shift: its later blocks' rows then no longer match a cold prefill of
  // its tokens, so they are not offered to the prefix cache), its shallow rows.
  struct Slot {
    std::vector<int32_t> tokens;
    bool shifted = false;
    ShallowRows shallow;
  };

  BackendOps& ops_;
  KvSlotsOptions options_;
  std::unique_ptr<BlockPool> pool_;  // which KV block is whose (the backend holds the rows)
  std::vector<BlockTable> tables_;
  std::unique_ptr<BlockPool> window_pool_;  // null without a window pool
  std::vector<BlockTable> window_tables_;
  std::vector<Slot> slots_;
};

}  // namespace inferscope
