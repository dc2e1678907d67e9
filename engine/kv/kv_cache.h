// The CPU backend's key/value cache: for each sequence slot and layer, K and V rows of one
// position each, stored as the layout's types (engine/kv/kv_layout.h). Several slots let beam
// search keep one history per beam. How many positions a slot holds is the forward pass's
// bookkeeping (engine/model/forward_pass.h).
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "engine/core/status.h"
#include "engine/kv/kv_layout.h"

namespace inferscope {

class KvCache {
 public:
  // Fails cleanly (no exception, no abort) when the memory cannot be allocated.
  static Result<std::unique_ptr<KvCache>> create(const KvLayout& layout);

  const KvLayout& layout() const { return layout_; }
  int64_t n_ctx() const { return layout_.n_ctx; }
  int n_slots() const { return layout_.n_slots; }
  uint64_t bytes() const { return layout_.bytes(); }

  // Row of position `pos` in layer `layer` of `slot`: layout().k_row_bytes() (v_row_bytes())
  // bytes, rows of consecutive positions adjacent.
  uint8_t* key(int slot, int64_t layer, int64_t pos) { return keys_.get() + offset(slot, layer, pos, k_row_); }
  uint8_t* value(int slot, int64_t layer, int64_t pos) { return values_.get() + offset(slot, layer, pos, v_row_); }

  // After the call slot i holds the first lengths[parents[i]] positions slot parents[i] held
  // (beam search re-ranking); lengths: the positions each slot holds now.
  Status reorder(std::span<const int32_t> parents, std::span<const int64_t> lengths);

 private:
  explicit KvCache(const KvLayout& layout);
  int64_t offset(int slot, int64_t layer, int64_t pos, int64_t row_bytes) const {
    return ((static_cast<int64_t>(slot) * layout_.n_layer + layer) * layout_.n_ctx + pos) * row_bytes;
  }

  KvLayout layout_;
  int64_t k_row_ = 0, v_row_ = 0;  // bytes per row
  std::unique_ptr<uint8_t[]> keys_;
  std::unique_ptr<uint8_t[]> values_;
};

}  // namespace inferscope
