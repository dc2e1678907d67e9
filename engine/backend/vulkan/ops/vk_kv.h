// The KV cache on the Vulkan device: where rows live (KvCacheLayout: pools of blocks with the
// CPU's row encodings, engine/kv/kv_layout.h and kernels/formats/kv_type.h), the block table a
// chunk reads them through (KvBlockTable), the write of a batch's K and V rows (shader
// kv_store.comp, one variant per KvType) and the copy of blocks (copy-on-write). The
// re-rotation of cached keys is vk_kv_rotate.h's.
// Operands may start at any multiple of 4 bytes of their buffers (vk_op_util.h: bind_words).
#pragma once

#include <cstdint>
#include <span>

#include "engine/backend/vulkan/vk_buffer.h"
#include "engine/backend/vulkan/vk_device.h"
#include "engine/backend/vulkan/vk_recorder.h"
#include "engine/core/status.h"
#include "engine/kv/block_table.h"
#include "engine/kv/kv_layout.h"
#include "kernels/formats/kv_type.h"

namespace inferscope::vulkan {

// Whether kv_store and attention have shaders for KV rows of `type`; the error says which.
Status check_kv_type(kernels::KvType type);

enum class KvPart { K, V };

// One buffer for K and one for V, each holding kv.n_layer layers back to back, a layer being a
// pool of kv.rows() rows (kv.n_blocks blocks of kv.block_size rows; row r is row r % block_size
// of block r / block_size) of n_embd_kv values encoded as kv.types.k / .v (kv_row_bytes bytes
// each, no padding between rows): row r of `layer` starts at byte row_byte(part, layer, r) of
// the span the ops are given. Rows of the 32-value block types are multiples of 2 bytes only
// (34 or 18 per block), so a row may start in the middle of a 32-bit word; the shaders address
// bytes. A cache buffer holds whole words: buffer_bytes rounds the rows' bytes up to a
// multiple of 4. VulkanOps gives each layer buffers of its own (kv.n_layer = 1).
// A layer may use only the first `width` values of each row (gemma4's window layers, whose
// heads are narrower than the rows: ModelConfig::layer_kv_width): the ops then store, read
// and rotate those, and the row's other bytes are left alone.
struct KvCacheLayout {
  KvLayout kv;
  int64_t width = 0;  // the values of each row the layer uses; 0: all kv.n_embd_kv

  int64_t values() const { return width > 0 ? width : kv.n_embd_kv; }

  kernels::KvType type(KvPart part) const { return part == KvPart::K ? kv.types.k : kv.types.v; }
  uint64_t row_bytes(KvPart part) const {
    return static_cast<uint64_t>(kernels::kv_row_bytes(type(part), kv.n_embd_kv));
  }
  int64_t rows() const { return kv.rows(); }  // per layer
  uint64_t row_byte(KvPart part, int64_t layer, int64_t row) const {
    return (static_cast<uint64_t>(layer) * static_cast<uint64_t>(rows()) + static_cast<uint64_t>(row)) *
           row_bytes(part);
  }
  // Bytes of the rows of one cache (K or V), every layer.
  uint64_t bytes(KvPart part) const { return row_byte(part, kv.n_layer, 0); }
  // Bytes of a buffer for them: whole 32-bit words.
  uint64_t buffer_bytes(KvPart part) const { return (bytes(part) + 3) / 4 * 4; }
  // log2(block_size).
  uint32_t block_shift() const;
};

// The part of `cache` (the `part` cache laid out as `layout`, from its first row) that holds
// layer `layer`'s pool, as a binding that starts at an allowed offset and ends at a whole word,
// and the byte of the layer's row 0 within it. Shared by kv_store and attention; one layer's
// pool must fit one binding (maxStorageBufferRange) and 32-bit byte offsets.
struct KvLayerBinding {
  BufferSpan span;
  uint32_t byte0 = 0;
};
Result<KvLayerBinding> kv_layer_binding(const Device& device, const BufferSpan& cache, const KvCacheLayout& layout,
                                        KvPart part, int64_t layer, const char* op, const char* what);

// A sequence's block table as kv_store and attention read it: entry i (a block of the pool) holds
// positions [i * block_size, (i + 1) * block_size), so position x is row
// ids[x / block_size] * block_size + x % block_size of every layer. `device`: the entries as
// int32 words from any multiple of 4 bytes of a buffer (host-visible memory is fine), written
// before the recording runs; `ids`: the same entries on the host, for the checks.
struct KvBlockTable {
  BufferSpan device;
  std::span<const int32_t> ids;
};

// OK when the table covers positions [0, positions) and names blocks of the pool only, or
// kNoBlock (a window pool's table where it let go of a block: no query of the window reads
// those positions); else an error naming the op.
Status check_block_table(const KvCacheLayout& layout, const KvBlockTable& table, int64_t positions, const char* op);

// Encodes k and v ([n_tokens][layout.values()] F32 each) as the first values of rows of layout.kv.types.k and .v, byte-
// identical to kernels::kv_quantize_row (F16: round to nearest even), and stores them as the
// rows of positions pos0 .. pos0 + n_tokens - 1 of `layer` through `table` in k_cache and
// v_cache. Only those rows' bytes change. One dispatch per cache.
// Preconditions (checked): 0 <= pos0, table covers pos0 + n_tokens positions with blocks of the
// pool, layout.values() <= n_embd_kv and a multiple of both types' kv_row_granule. Not checked: the table names each
// block once (two positions sharing a row would race).
Status record_kv_store(Device& device, Recorder& recorder, BufferSpan k, BufferSpan v, BufferSpan k_cache,
                       BufferSpan v_cache, const KvCacheLayout& layout, int64_t layer, const KvBlockTable& table,
                       int64_t pos0, int64_t n_tokens, DispatchLabel label = {});

// record_kv_store for one cache: src ([n_tokens][layout.values()] F32) encoded as layout.type(part)
// into the rows of positions pos0 .. pos0 + n_tokens - 1 of `layer` of `cache` through `table`.
// One dispatch; the same preconditions and checks.
Status record_kv_store_part(Device& device, Recorder& recorder, BufferSpan src, BufferSpan cache,
                            const KvCacheLayout& layout, KvPart part, int64_t layer, const KvBlockTable& table,
                            int64_t pos0, int64_t n_tokens, DispatchLabel label = {});

// OK when every copy names two different blocks of the pool and at most block_size rows, and
// no block is both copied from and into (or into twice): what one vkCmdCopyBuffer of all the
// copies needs.
Status check_block_copies(const KvCacheLayout& layout, std::span<const BlockCopy> copies);

// For each copy, rows [0, rows) of block `from` into block `to` of `layer` in `cache` (the `part`
// cache laid out as `layout`): one vkCmdCopyBuffer with a region per copy (a block's rows are
// contiguous bytes), byte for byte, so the bytes of a neighbouring block that share a word stay.
// Precondition: check_block_copies(layout, copies).
void record_kv_copy(Recorder& recorder, const BufferSpan& cache, const KvCacheLayout& layout, KvPart part,
                    int64_t layer, std::span<const BlockCopy> copies);

}  // namespace inferscope::vulkan
