#include "engine/kv/kv_cache.h"

#include <cstring>
#include <new>
#include <vector>

namespace inferscope {

KvCache::KvCache(const KvLayout& layout)
    : layout_(layout), k_row_(layout.k_row_bytes()), v_row_(layout.v_row_bytes()) {}

Result<std::unique_ptr<KvCache>> KvCache::create(const KvLayout& layout) {
  auto cache = std::unique_ptr<KvCache>(new KvCache(layout));
  const size_t rows = static_cast<size_t>(layout.n_slots) * static_cast<size_t>(layout.n_layer * layout.n_ctx);
  // Left uninitialized: pages are committed only as positions are written.
  cache->keys_.reset(new (std::nothrow) uint8_t[rows * static_cast<size_t>(cache->k_row_)]);
  cache->values_.reset(new (std::nothrow) uint8_t[rows * static_cast<size_t>(cache->v_row_)]);
  if (!cache->keys_ || !cache->values_) {
    return Result<std::unique_ptr<KvCache>>::error(
        "out of memory: the KV cache (" + kv_types_label(layout.types) + ") for a context of " +
        std::to_string(layout.n_ctx) + " tokens needs " + std::to_string(layout.bytes() >> 20) +
        " MiB; try a smaller --context or a quantized --cache-type");
  }
  return cache;
}

Status KvCache::reorder(std::span<const int32_t> parents, std::span<const int64_t> old_lengths) {
  const int n_slots = layout_.n_slots;
  if (static_cast<int>(parents.size()) != n_slots || static_cast<int>(old_lengths.size()) != n_slots) {
    return Status::error("KV reorder: wrong number of parents");
  }
  for (int32_t p : parents) {
    if (p < 0 || p >= n_slots) return Status::error("KV reorder: parent slot out of range");
  }
  // Copy only what differs; stage sources that would be overwritten before they are read.
  // A staged slot holds per layer its K rows then its V rows.
  const int64_t n_layer = layout_.n_layer;
  std::vector<std::vector<uint8_t>> staged(static_cast<size_t>(n_slots));
  for (int dst = 0; dst < n_slots; ++dst) {
    const int src = parents[static_cast<size_t>(dst)];
    if (src == dst || !staged[static_cast<size_t>(src)].empty()) continue;
    const int64_t len = old_lengths[static_cast<size_t>(src)];
    const int64_t kn = len * k_row_, vn = len * v_row_;
    auto& buf = staged[static_cast<size_t>(src)];
    buf.resize(static_cast<size_t>(n_layer * (kn + vn) + 1));
    for (int64_t l = 0; l < n_layer; ++l) {
      std::memcpy(buf.data() + l * (kn + vn), key(src, l, 0), static_cast<size_t>(kn));
      std::memcpy(buf.data() + l * (kn + vn) + kn, value(src, l, 0), static_cast<size_t>(vn));
    }
  }
  for (int dst = 0; dst < n_slots; ++dst) {
    const int src = parents[static_cast<size_t>(dst)];
    if (src == dst) continue;
    const int64_t len = old_lengths[static_cast<size_t>(src)];
    const int64_t kn = len * k_row_, vn = len * v_row_;
    const auto& buf = staged[static_cast<size_t>(src)];
    for (int64_t l = 0; l < n_layer; ++l) {
      std::memcpy(key(dst, l, 0), buf.data() + l * (kn + vn), static_cast<size_t>(kn));
      std::memcpy(value(dst, l, 0), buf.data() + l * (kn + vn) + kn, static_cast<size_t>(vn));
    }
  }
  return Status::ok();
}

}  // namespace inferscope
