// Paged KV helpers of the Vulkan KV and attention tests (test_vk_attention.cpp,
// test_vk_attention_sinks.cpp, test_vk_kv_rotate.cpp, test_vk_kv_types.cpp, test_vk_ops.cpp,
// test_vk_quantize.cpp): block tables in a shuffled order, the row a position maps to, device
// copies of a table, and host images of caches of typed rows.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "engine/backend/vulkan/ops/vk_kv.h"
#include "kernels/cpu/kv_quant.h"
#include "tests/support/vulkan_gpu.h"
#include "tests/vulkan/vk_op_checks.h"

namespace inferscope::vulkan::op_tests {

// A table of `entries` distinct blocks of a pool of n_blocks (>= entries), in a random order
// that is not ascending (so a kernel that ignores the table, or reads it as the identity,
// reads the wrong rows); the pool's other blocks are in no table.
inline std::vector<int32_t> shuffled_table(int64_t entries, int64_t n_blocks, uint32_t seed) {
  std::vector<int32_t> ids(static_cast<size_t>(n_blocks));
  std::iota(ids.begin(), ids.end(), 0);
  std::mt19937 rng(seed);
  do {
    std::shuffle(ids.begin(), ids.end(), rng);
  } while (entries > 1 && std::is_sorted(ids.begin(), ids.begin() + entries));
  ids.resize(static_cast<size_t>(entries));
  return ids;
}

// The pool row of position x through `table` (blocks of block_size rows).
inline int64_t table_row(const std::vector<int32_t>& table, int64_t block_size, int64_t x) {
  return int64_t{table[static_cast<size_t>(x / block_size)]} * block_size + x % block_size;
}

// A one-layer (or n_layer) pool layout of n_blocks blocks.
inline KvCacheLayout pool_layout(int64_t n_layer, int64_t n_embd_kv, int32_t block_size, int64_t n_blocks,
                                 KvTypes types = {}) {
  KvLayout kv;
  kv.types = types;
  kv.n_layer = n_layer;
  kv.n_embd_kv = n_embd_kv;
  kv.block_size = block_size;
  kv.n_blocks = n_blocks;
  return KvCacheLayout{kv};
}

// The table on the device, `pad_words` words into its buffer (a table that starts inside its
// binding), with the host copy: what record_kv_store and record_attention take.
inline KvBlockTable device_table(inferscope::testing::Gpu& gpu, const std::vector<int32_t>& table,
                                 int64_t pad_words = 0) {
  std::vector<int32_t> words(static_cast<size_t>(pad_words), -1);
  words.insert(words.end(), table.begin(), table.end());
  const Buffer& b = gpu.upload(words, 0);
  return {BufferSpan{&b, static_cast<uint64_t>(pad_words) * 4, 0}, table};
}

inline constexpr kernels::KvType kAllKvTypes[] = {kernels::KvType::F16, kernels::KvType::Q8_0, kernels::KvType::Q4_0,
                                                   kernels::KvType::NF4, kernels::KvType::Int4};

// Attention over quantized K or V against kernels::attention_group on the same bytes: the largest
// |difference| allowed (the reasoning is at the top of test_vk_kv_types.cpp).
inline constexpr double kKvAttentionMaxAbs = 1e-4;

// Host image of a cache (`part` of layout) as bytes, with the rows of positions [pos0, pos0 + n)
// of `layer` through `table` encoded from x ([n][n_embd_kv]) by kv_quantize_row.
inline void encode_positions(std::vector<uint8_t>& cache, const KvCacheLayout& layout, KvPart part, int64_t layer,
                             const std::vector<int32_t>& table, int64_t pos0, int64_t n, const float* x) {
  for (int64_t t = 0; t < n; ++t) {
    const int64_t row = table_row(table, layout.kv.block_size, pos0 + t);
    kernels::kv_quantize_row(layout.type(part), x + t * layout.kv.n_embd_kv,
                             cache.data() + layout.row_byte(part, layer, row), layout.kv.n_embd_kv);
  }
}

// A host image of a whole cache of random encoded rows (every layer, every block: what other
// sequences left there).
inline std::vector<uint8_t> random_cache(const KvCacheLayout& layout, KvPart part, uint32_t seed) {
  std::vector<uint8_t> cache(layout.buffer_bytes(part), 0x5A);
  const int64_t KV = layout.kv.n_embd_kv, rows = layout.kv.n_layer * layout.rows();
  const auto x = random_floats(static_cast<size_t>(rows * KV), seed);
  for (int64_t r = 0; r < rows; ++r) {
    kernels::kv_quantize_row(layout.type(part), x.data() + r * KV, cache.data() + r * layout.row_bytes(part), KV);
  }
  return cache;
}

}  // namespace inferscope::vulkan::op_tests
