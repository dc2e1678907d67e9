#include "engine/kv/kv_cache.h"

#include <cstring>
#include <new>

namespace inferscope {

KvCache::KvCache(const KvLayout& layout)
    : layout_(layout), k_row_(layout.k_row_bytes()), v_row_(layout.v_row_bytes()) {
  layer_row0_.push_back(0);
  for (int64_t l = 0; l < layout.n_layer; ++l) layer_row0_.push_back(layer_row0_.back() + layout.rows_of_layer(l));
}

Result<std::unique_ptr<KvCache>> KvCache::create(const KvLayout& layout) {
  auto cache = std::unique_ptr<KvCache>(new KvCache(layout));
  const auto rows = static_cast<size_t>(cache->layer_row0_.back());
  // Left uninitialized: pages are committed only as rows are written.
  cache->keys_.reset(new (std::nothrow) uint8_t[rows * static_cast<size_t>(cache->k_row_)]);
  cache->values_.reset(new (std::nothrow) uint8_t[rows * static_cast<size_t>(cache->v_row_)]);
  if (!cache->keys_ || !cache->values_) {
    return Result<std::unique_ptr<KvCache>>::error(
        "out of memory: the KV cache (" + kv_types_label(layout.types) + ") of " + std::to_string(layout.rows()) +
        " positions needs " + std::to_string(layout.bytes() >> 20) +
        " MiB; try a smaller --context or a quantized --cache-type");
  }
  return cache;
}

void KvCache::copy_block(KvPool pool, const BlockCopy& copy) {
  const int64_t bs = layout_.block_size;
  for (int64_t l = 0; l < layout_.n_layer; ++l) {
    if (layout_.pool_of(l) != pool) continue;
    std::memcpy(key(l, copy.to * bs), key(l, copy.from * bs), static_cast<size_t>(copy.rows * k_row_));
    std::memcpy(value(l, copy.to * bs), value(l, copy.from * bs), static_cast<size_t>(copy.rows * v_row_));
  }
}

}  // namespace inferscope
