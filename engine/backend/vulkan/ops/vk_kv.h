// The F16 KV cache on the Vulkan device: where rows live (KvCacheLayout, the same order as
// engine/kv/kv_cache.h) and the write of a batch's K and V rows (shader kv_store.comp).
// Operands may start at any multiple of 4 bytes of their buffers (vk_op_util.h: bind_words).
#pragma once

#include <cstdint>

#include "engine/backend/vulkan/vk_buffer.h"
#include "engine/backend/vulkan/vk_device.h"
#include "engine/backend/vulkan/vk_recorder.h"
#include "engine/core/status.h"

namespace inferscope::vulkan {

// One buffer for K and one for V, each [n_slots][n_layer][n_ctx][n_embd_kv] F16 (halves packed
// two per 32-bit word, low half first): the row of (slot, layer, pos) starts at half
// row_half(slot, layer, pos) of the span the ops are given.
struct KvCacheLayout {
  int64_t n_layer = 0;
  int64_t n_ctx = 0;
  int64_t n_embd_kv = 0;  // even

  uint64_t row_half(int slot, int64_t layer, int64_t pos) const {
    return ((static_cast<uint64_t>(slot) * n_layer + layer) * n_ctx + pos) * n_embd_kv;
  }
  // Bytes of one cache (K or V) holding n_slots slots.
  uint64_t bytes(int n_slots) const { return static_cast<uint64_t>(n_slots) * n_layer * n_ctx * n_embd_kv * 2; }
};

// The part of `cache` (a K or V cache laid out as `layout`, from its first row) that holds
// (slot, layer)'s n_ctx rows, as a binding that starts at an allowed offset, and the 32-bit word
// of position 0's row within it. Shared by kv_store and attention, so caches above
// maxStorageBufferRange work as long as one layer's rows fit.
struct KvLayerBinding {
  BufferSpan span;
  uint32_t word0 = 0;
};
Result<KvLayerBinding> kv_layer_binding(const Device& device, const BufferSpan& cache, const KvCacheLayout& layout,
                                        int slot, int64_t layer, const char* op, const char* what);

// Converts k and v ([n_tokens][n_embd_kv] F32 each) to F16 (round to nearest even, bit-identical
// to kernels::to_fp16) and stores them as the rows of positions pos0 .. pos0 + n_tokens - 1 of
// (slot, layer) in k_cache and v_cache. One dispatch for both.
// Preconditions: 0 <= pos0, pos0 + n_tokens <= n_ctx, n_embd_kv even.
Status record_kv_store(Device& device, Recorder& recorder, BufferSpan k, BufferSpan v, BufferSpan k_cache,
                       BufferSpan v_cache, const KvCacheLayout& layout, int slot, int64_t layer, int64_t pos0,
                       int64_t n_tokens, DispatchLabel label = {});

}  // namespace inferscope::vulkan
