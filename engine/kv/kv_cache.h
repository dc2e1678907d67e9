// The CPU backend's key/value cache in F16: for each sequence slot and layer, K and V rows of
// n_embd_kv values per position. Several slots let beam search keep one history per beam. How
// many positions a slot holds is the forward pass's bookkeeping (engine/model/forward_pass.h).
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "engine/core/status.h"

namespace inferscope {

class KvCache {
 public:
  // Fails cleanly (no exception, no abort) when the memory cannot be allocated.
  static Result<std::unique_ptr<KvCache>> create(int64_t n_layer, int64_t n_embd_kv, int64_t n_ctx, int n_slots);

  int64_t n_ctx() const { return n_ctx_; }
  int n_slots() const { return n_slots_; }
  int64_t row_size() const { return n_embd_kv_; }  // F16 values per position (all KV heads)
  uint64_t bytes() const { return static_cast<uint64_t>(slot_values_) * n_slots_ * 2 * sizeof(uint16_t); }
  static uint64_t bytes_for(int64_t n_layer, int64_t n_embd_kv, int64_t n_ctx, int n_slots) {
    return static_cast<uint64_t>(n_layer) * n_embd_kv * n_ctx * n_slots * 2 * sizeof(uint16_t);
  }

  // Row of position `pos` in layer `layer` of `slot` (n_embd_kv F16 values).
  uint16_t* key(int slot, int64_t layer, int64_t pos) { return keys_.get() + offset(slot, layer, pos); }
  uint16_t* value(int slot, int64_t layer, int64_t pos) { return values_.get() + offset(slot, layer, pos); }

  // After the call slot i holds the first lengths[parents[i]] positions slot parents[i] held
  // (beam search re-ranking); lengths: the positions each slot holds now.
  Status reorder(std::span<const int32_t> parents, std::span<const int64_t> lengths);

 private:
  KvCache() = default;
  int64_t offset(int slot, int64_t layer, int64_t pos) const {
    return static_cast<int64_t>(slot) * slot_values_ + (layer * n_ctx_ + pos) * n_embd_kv_;
  }

  int64_t n_layer_ = 0;
  int64_t n_embd_kv_ = 0;
  int64_t n_ctx_ = 0;
  int n_slots_ = 0;
  int64_t slot_values_ = 0;  // F16 values per slot for K (and the same for V)
  std::unique_ptr<uint16_t[]> keys_;
  std::unique_ptr<uint16_t[]> values_;
};

}  // namespace inferscope
