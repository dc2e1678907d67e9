// The key/value cache in F16: for each sequence slot and layer, K and V rows of n_embd_kv
// values per position. Several slots let beam search keep one history per beam.
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

  // Positions filled so far in a slot.
  int64_t length(int slot) const { return lengths_[static_cast<size_t>(slot)]; }
  void set_length(int slot, int64_t n) { lengths_[static_cast<size_t>(slot)] = n; }
  void clear() {
    for (int s = 0; s < n_slots_; ++s) set_length(s, 0);
  }

  // After the call slot i holds what slot parents[i] held (beam search re-ranking).
  Status reorder(std::span<const int32_t> parents);

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
  std::unique_ptr<int64_t[]> lengths_storage_;
  std::span<int64_t> lengths_;
};

}  // namespace inferscope
