// A hybrid model's recurrent states as the forward pass keeps them (engine/kv/recurrent_layout.h).
// KV rows can be cut back to any position; a recurrent state cannot: it holds everything its
// slot was given. So copies of it, checkpoints with the tokens they have seen, are kept where the
// pass may want to go back to: a prompt's end less its last token (the same prompt again, a
// regenerated reply, or a conversation that goes on reuse it), a speculative verification's
// start (its rejected drafts), and a slot's state when a new request empties it. Going back to a
// position restores the newest checkpoint at or before it and replays the tokens from there,
// at the slot's next forward call (ForwardPass::catch_up). A prefix other requests can reuse is
// one that ends where such a checkpoint was taken.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/backend/backend_ops.h"
#include "engine/core/status.h"

namespace inferscope {

class RecurrentStates {
 public:
  // `ops` must outlive the states.
  RecurrentStates(BackendOps& ops, const RecurrentLayout& layout);

  struct Match {
    int checkpoint = -1;  // none: a zero state, length 0
    int64_t length = 0;
  };

  // Copies `slot`'s state, which has seen `tokens`, into the least recently used checkpoint.
  Status save(int slot, std::span<const int32_t> tokens);
  // The longest checkpoint whose tokens are `tokens`' first length, length <= max_length.
  Match find(std::span<const int32_t> tokens, int64_t max_length);
  // The checkpoint's state into `slot` (nothing for a zero state: the slot's next span starts at 0).
  Status restore(const Match& match, int slot);
  // Slot i takes slot parents[i]'s state (beam search), through the spare state where slots swap.
  Status reorder(std::span<const int32_t> parents);
  // The tokens `slot` must be given again before its next call (after going back).
  std::vector<int32_t>& replay(int slot) { return replay_[static_cast<size_t>(slot)]; }
  // Forgets every checkpoint and replay.
  void clear();

 private:
  struct Checkpoint {
    std::vector<int32_t> tokens;
    uint64_t used = 0;  // 0: empty
  };

  BackendOps& ops_;
  RecurrentLayout layout_;
  std::vector<Checkpoint> checkpoints_;
  std::vector<std::vector<int32_t>> replay_;
  uint64_t clock_ = 0;
};

}  // namespace inferscope
