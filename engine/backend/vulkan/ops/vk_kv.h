// The KV cache on the Vulkan device: where rows live (KvCacheLayout, the same order and row
// encodings as the CPU's cache, engine/kv/kv_layout.h and kernels/formats/kv_type.h) and the write
// of a batch's K and V rows (shader kv_store.comp, one variant per KvType).
// Operands may start at any multiple of 4 bytes of their buffers (vk_op_util.h: bind_words).
#pragma once

#include <cstdint>

#include "engine/backend/vulkan/vk_buffer.h"
#include "engine/backend/vulkan/vk_device.h"
#include "engine/backend/vulkan/vk_recorder.h"
#include "engine/core/status.h"
#include "engine/kv/kv_layout.h"
#include "kernels/formats/kv_type.h"

namespace inferscope::vulkan {

// Whether kv_store and attention have shaders for KV rows of `type`; the error says which.
Status check_kv_type(kernels::KvType type);

enum class KvPart { K, V };

// One buffer for K and one for V, each [n_slots][n_layer][n_ctx] rows of n_embd_kv values
// encoded as types.k / types.v (kv_row_bytes bytes each, no padding between rows): the row of
// (slot, layer, pos) starts at byte row_byte(part, slot, layer, pos) of the span the ops are
// given. Rows of the 32-value block types are multiples of 2 bytes only (34 or 18 per block),
// so a row may start in the middle of a 32-bit word; the shaders address bytes. A cache buffer
// holds whole words: buffer_bytes rounds the rows' bytes up to a multiple of 4.
struct KvCacheLayout {
  int64_t n_layer = 0;
  int64_t n_ctx = 0;
  int64_t n_embd_kv = 0;  // even; a multiple of 32 for the quantized types
  KvTypes types;

  kernels::KvType type(KvPart part) const { return part == KvPart::K ? types.k : types.v; }
  uint64_t row_bytes(KvPart part) const {
    return static_cast<uint64_t>(kernels::kv_row_bytes(type(part), n_embd_kv));
  }
  uint64_t row_byte(KvPart part, int slot, int64_t layer, int64_t pos) const {
    return ((static_cast<uint64_t>(slot) * n_layer + layer) * n_ctx + pos) * row_bytes(part);
  }
  // Bytes of the rows of one cache (K or V) holding n_slots slots.
  uint64_t bytes(KvPart part, int n_slots) const { return row_byte(part, n_slots, 0, 0); }
  // Bytes of a buffer for them: whole 32-bit words.
  uint64_t buffer_bytes(KvPart part, int n_slots) const { return (bytes(part, n_slots) + 3) / 4 * 4; }
};

// The part of `cache` (the `part` cache laid out as `layout`, from its first row) that holds
// (slot, layer)'s n_ctx rows, as a binding that starts at an allowed offset and ends at a whole
// word, and the byte of position 0's row within it. Shared by kv_store and attention, so caches
// above maxStorageBufferRange work as long as one layer's rows fit.
struct KvLayerBinding {
  BufferSpan span;
  uint32_t byte0 = 0;
};
Result<KvLayerBinding> kv_layer_binding(const Device& device, const BufferSpan& cache, const KvCacheLayout& layout,
                                        KvPart part, int slot, int64_t layer, const char* op, const char* what);

// Encodes k and v ([n_tokens][n_embd_kv] F32 each) as rows of layout.types.k and .v, byte-
// identical to kernels::kv_quantize_row (F16: round to nearest even), and stores them as the
// rows of positions pos0 .. pos0 + n_tokens - 1 of (slot, layer) in k_cache and v_cache. Only
// those rows' bytes change. One dispatch per cache.
// Preconditions: 0 <= pos0, pos0 + n_tokens <= n_ctx, n_embd_kv a multiple of both types'
// kv_row_granule.
Status record_kv_store(Device& device, Recorder& recorder, BufferSpan k, BufferSpan v, BufferSpan k_cache,
                       BufferSpan v_cache, const KvCacheLayout& layout, int slot, int64_t layer, int64_t pos0,
                       int64_t n_tokens, DispatchLabel label = {});

}  // namespace inferscope::vulkan
