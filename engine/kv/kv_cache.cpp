#include "engine/kv/kv_cache.h"

#include <cstring>
#include <new>
#include <vector>

namespace inferscope {

Result<std::unique_ptr<KvCache>> KvCache::create(int64_t n_layer, int64_t n_embd_kv, int64_t n_ctx, int n_slots) {
  auto cache = std::unique_ptr<KvCache>(new KvCache());
  cache->n_layer_ = n_layer;
  cache->n_embd_kv_ = n_embd_kv;
  cache->n_ctx_ = n_ctx;
  cache->n_slots_ = n_slots;
  cache->slot_values_ = n_layer * n_ctx * n_embd_kv;
  const size_t total = static_cast<size_t>(cache->slot_values_) * static_cast<size_t>(n_slots);
  // Left uninitialized: pages are committed only as positions are written.
  cache->keys_.reset(new (std::nothrow) uint16_t[total]);
  cache->values_.reset(new (std::nothrow) uint16_t[total]);
  if (!cache->keys_ || !cache->values_) {
    return Result<std::unique_ptr<KvCache>>::error(
        "out of memory: the KV cache for a context of " + std::to_string(n_ctx) + " tokens needs " +
        std::to_string(bytes_for(n_layer, n_embd_kv, n_ctx, n_slots) >> 20) + " MiB; try a smaller --context");
  }
  return cache;
}

Status KvCache::reorder(std::span<const int32_t> parents, std::span<const int64_t> old_lengths) {
  if (static_cast<int>(parents.size()) != n_slots_ || static_cast<int>(old_lengths.size()) != n_slots_) {
    return Status::error("KV reorder: wrong number of parents");
  }
  for (int32_t p : parents) {
    if (p < 0 || p >= n_slots_) return Status::error("KV reorder: parent slot out of range");
  }
  // Copy only what differs; stage sources that would be overwritten before they are read.
  std::vector<std::vector<uint16_t>> staged(static_cast<size_t>(n_slots_));
  for (int dst = 0; dst < n_slots_; ++dst) {
    const int src = parents[static_cast<size_t>(dst)];
    if (src == dst || !staged[static_cast<size_t>(src)].empty()) continue;
    const int64_t n = old_lengths[static_cast<size_t>(src)] * n_embd_kv_;
    auto& buf = staged[static_cast<size_t>(src)];
    buf.resize(static_cast<size_t>(2 * n_layer_ * n + 1));
    for (int64_t l = 0; l < n_layer_; ++l) {
      std::memcpy(buf.data() + 2 * l * n, key(src, l, 0), static_cast<size_t>(n) * sizeof(uint16_t));
      std::memcpy(buf.data() + (2 * l + 1) * n, value(src, l, 0), static_cast<size_t>(n) * sizeof(uint16_t));
    }
  }
  for (int dst = 0; dst < n_slots_; ++dst) {
    const int src = parents[static_cast<size_t>(dst)];
    if (src == dst) continue;
    const int64_t n = old_lengths[static_cast<size_t>(src)] * n_embd_kv_;
    const auto& buf = staged[static_cast<size_t>(src)];
    for (int64_t l = 0; l < n_layer_; ++l) {
      std::memcpy(key(dst, l, 0), buf.data() + 2 * l * n, static_cast<size_t>(n) * sizeof(uint16_t));
      std::memcpy(value(dst, l, 0), buf.data() + (2 * l + 1) * n, static_cast<size_t>(n) * sizeof(uint16_t));
    }
  }
  return Status::ok();
}

}  // namespace inferscope
