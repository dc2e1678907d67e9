// The CPU backend's key/value storage: per layer, the K and V rows of its pool's blocks
// (engine/kv/kv_layout.h: the main pool, or the window pool of a sliding-window layer), stored
// as the layout's types. Row r of a layer is row r % block_size of block r / block_size; which sequence owns which block is the forward pass's bookkeeping
// (engine/kv/block_table.h). Pages are committed only as rows are written, so the resident
// memory follows the blocks used (the pool hands out the lowest free blocks first).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/core/status.h"
#include "engine/kv/block_table.h"
#include "engine/kv/kv_layout.h"

namespace inferscope {

class KvCache {
 public:
  // Fails cleanly (no exception, no abort) when the memory cannot be allocated.
  static Result<std::unique_ptr<KvCache>> create(const KvLayout& layout);

  const KvLayout& layout() const { return layout_; }
  uint64_t bytes() const { return layout_.bytes(); }

  // Row `row` (< layout().rows_of_layer(layer)) of layer `layer`: k_row_bytes() (v_row_bytes())
  // bytes, the rows of a layer back to back.
  uint8_t* key(int64_t layer, int64_t row) { return keys_.get() + offset(layer, row, k_row_); }
  uint8_t* value(int64_t layer, int64_t row) { return values_.get() + offset(layer, row, v_row_); }

  // Rows [0, copy.rows) of block copy.from into block copy.to of `pool`, in the K and V of each
  // of its layers.
  void copy_block(KvPool pool, const BlockCopy& copy);

 private:
  explicit KvCache(const KvLayout& layout);
  int64_t offset(int64_t layer, int64_t row, int64_t row_bytes) const {
    return (layer_row0_[static_cast<size_t>(layer)] + row) * row_bytes;
  }

  KvLayout layout_;
  int64_t k_row_ = 0, v_row_ = 0;  // bytes per row
  std::vector<int64_t> layer_row0_;  // per layer, its first row; then the rows of all layers
  std::unique_ptr<uint8_t[]> keys_;
  std::unique_ptr<uint8_t[]> values_;
};

}  // namespace inferscope
