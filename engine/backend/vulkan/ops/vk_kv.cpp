#include "engine/backend/vulkan/ops/vk_kv.h"

#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "engine/backend/vulkan/ops/vk_op_util.h"

namespace inferscope::vulkan {

Status check_kv_type(kernels::KvType type) {
  switch (type) {
    case kernels::KvType::F16:
    case kernels::KvType::Q8_0:
    case kernels::KvType::Q4_0:
    case kernels::KvType::NF4:
    case kernels::KvType::Int4: return Status::ok();
  }
  return Status::error("the Vulkan backend has no KV-cache shaders for type " +
                       std::string(kernels::kv_type_name(type)));
}

uint32_t KvCacheLayout::block_shift() const {
  return static_cast<uint32_t>(std::countr_zero(static_cast<uint32_t>(kv.block_size)));
}

namespace {

struct KvStorePush {
  uint32_t n_items;        // n_tokens * items_per_row
  uint32_t items_per_row;  // F16: pairs of values; quantized: 32-value blocks
  uint32_t row_bytes;
  uint32_t byte0;          // byte of the layer's row 0 in the cache binding
  uint32_t src_off;        // first element of the source in its binding
  uint32_t pos0;
  uint32_t block_shift;    // log2(block_size)
  uint32_t table_off;      // first entry of the block table in its binding
};

// Encodes one F32 source as rows of `part` at positions pos0.. of `layer` through the table.
Status record_store_part(Device& device, Recorder& recorder, BufferSpan src, BufferSpan cache,
                         const KvCacheLayout& layout, KvPart part, int64_t layer, const BoundSpan& table,
                         int64_t pos0, int64_t n_tokens, DispatchLabel label) {
  constexpr const char* kOp = "kv_store";
  const kernels::KvType type = layout.type(part);
  const char* what = part == KvPart::K ? "k_cache" : "v_cache";
  auto cb = kv_layer_binding(device, cache, layout, part, layer, kOp, what);
  if (!cb) return cb.status();
  const int64_t width = layout.values();
  if (width % kernels::kv_row_granule(type) != 0 || width > layout.kv.n_embd_kv) {
    return Status::error(std::string("kv_store: ") + what + " rows of " + std::string(kernels::kv_type_name(type)) +
                         " take a multiple of " + std::to_string(kernels::kv_row_granule(type)) + " values up to " +
                         std::to_string(layout.kv.n_embd_kv) + ", not " + std::to_string(width));
  }
  if (n_tokens == 0) return Status::ok();
  const uint64_t values = static_cast<uint64_t>(n_tokens * width);
  INFERSCOPE_BIND_WORDS(sb, device, src, values, kOp, part == KvPart::K ? "k" : "v");
  const uint64_t per_item = type == kernels::KvType::F16 ? 2 : static_cast<uint64_t>(kernels::kKvBlock);
  KvStorePush push{};
  push.n_items = static_cast<uint32_t>(values / per_item);
  push.items_per_row = static_cast<uint32_t>(static_cast<uint64_t>(width) / per_item);
  push.row_bytes = static_cast<uint32_t>(layout.row_bytes(part));
  push.byte0 = cb->byte0;
  push.src_off = sb.first;
  push.pos0 = static_cast<uint32_t>(pos0);
  push.block_shift = layout.block_shift();
  push.table_off = table.first;
  const uint32_t wg = op_workgroup_size(device, type == kernels::KvType::F16 ? 256 : 64);
  const uint32_t spec[] = {wg};
  auto kernel = device.kernel("kv_store_" + std::string(kernels::kv_type_name(type)), 3, spec);
  if (!kernel) return kernel.status();
  recorder.dispatch(**kernel, {sb.span, cb->span, table.span}, push, op_group_count(device, push.n_items, wg), 1, 1,
                    label);
  return Status::ok();
}

}  // namespace

Result<KvLayerBinding> kv_layer_binding(const Device& device, const BufferSpan& cache, const KvCacheLayout& layout,
                                        KvPart part, int64_t layer, const char* op, const char* what) {
  const std::string where = std::string(op) + ": " + what;
  if (!cache.buffer) return Status::error(where + " has no buffer");
  const KvLayout& kv = layout.kv;
  if (kv.n_embd_kv <= 0 || kv.n_embd_kv % 2 != 0 || kv.n_blocks <= 0) {
    return Status::error(where + ": the cache layout needs an even n_embd_kv and at least one block");
  }
  if (kv.block_size <= 0 || !std::has_single_bit(static_cast<uint32_t>(kv.block_size))) {
    return Status::error(where + ": the block size " + std::to_string(kv.block_size) + " is not a power of two");
  }
  if (layer < 0 || layer >= kv.n_layer) return Status::error(where + ": layer out of range");
  if (cache.offset % 4 != 0) return Status::error(where + " must start at a multiple of 4 bytes");
  const uint64_t layer_bytes = static_cast<uint64_t>(layout.rows()) * layout.row_bytes(part);
  const uint64_t start = layout.row_byte(part, layer, 0);  // bytes from the span's start
  const uint64_t end = (start + layer_bytes + 3) / 4 * 4;  // the binding's end, a whole word
  if (end > cache.bytes()) {
    return Status::error(where + " holds " + std::to_string(cache.bytes()) + " bytes; layer " + std::to_string(layer) +
                         " ends at byte " + std::to_string(end));
  }
  const uint64_t align = std::max<uint64_t>(device.info().min_storage_buffer_offset_alignment, 4);
  const uint64_t absolute = cache.offset + start;
  const uint64_t bind_offset = absolute / align * align;
  if (bind_offset < cache.offset) return Status::error(where + " starts at a misaligned offset");
  KvLayerBinding b;
  b.span = {cache.buffer, bind_offset, cache.offset + end - bind_offset};
  b.byte0 = static_cast<uint32_t>(absolute - bind_offset);
  INFERSCOPE_RETURN_IF_ERROR(check_u32(b.span.size, op, "one layer's cache bytes"));
  INFERSCOPE_RETURN_IF_ERROR(check_span(device, b.span, b.span.size, op, what));
  return b;
}

Status check_block_table(const KvCacheLayout& layout, const KvBlockTable& table, int64_t positions, const char* op) {
  const int64_t covered = static_cast<int64_t>(table.ids.size()) * layout.kv.block_size;
  if (positions > covered) {
    return Status::error(std::string(op) + ": positions 0.." + std::to_string(positions - 1) + " need " +
                         std::to_string((positions + layout.kv.block_size - 1) / layout.kv.block_size) +
                         " blocks; the block table has " + std::to_string(table.ids.size()));
  }
  for (const int32_t id : table.ids) {
    if (id == kNoBlock) continue;  // a window pool's entry no query reads
    if (id < 0 || id >= layout.kv.n_blocks) {
      return Status::error(std::string(op) + ": block table entry " + std::to_string(id) + " is outside the pool of " +
                           std::to_string(layout.kv.n_blocks) + " blocks");
    }
  }
  return Status::ok();
}

namespace {

// The checks of a store of n_tokens rows from pos0 through `table`.
Status check_store(const KvCacheLayout& layout, const KvBlockTable& table, int64_t pos0, int64_t n_tokens) {
  constexpr const char* kOp = "kv_store";
  if (n_tokens < 0 || pos0 < 0) return Status::error("kv_store: negative size or position");
  INFERSCOPE_RETURN_IF_ERROR(check_block_table(layout, table, pos0 + n_tokens, kOp));
  INFERSCOPE_RETURN_IF_ERROR(check_u32(n_tokens * layout.values(), kOp, "n_tokens * row values"));
  return check_u32(pos0 + n_tokens, kOp, "positions");
}

}  // namespace

Status record_kv_store(Device& device, Recorder& recorder, BufferSpan k, BufferSpan v, BufferSpan k_cache,
                       BufferSpan v_cache, const KvCacheLayout& layout, int64_t layer, const KvBlockTable& table,
                       int64_t pos0, int64_t n_tokens, DispatchLabel label) {
  constexpr const char* kOp = "kv_store";
  INFERSCOPE_RETURN_IF_ERROR(check_store(layout, table, pos0, n_tokens));
  if (n_tokens == 0) return Status::ok();
  INFERSCOPE_BIND_WORDS(tb, device, table.device, table.ids.size(), kOp, "block table");
  INFERSCOPE_RETURN_IF_ERROR(
      record_store_part(device, recorder, k, k_cache, layout, KvPart::K, layer, tb, pos0, n_tokens, label));
  return record_store_part(device, recorder, v, v_cache, layout, KvPart::V, layer, tb, pos0, n_tokens, label);
}

Status record_kv_store_part(Device& device, Recorder& recorder, BufferSpan src, BufferSpan cache,
                            const KvCacheLayout& layout, KvPart part, int64_t layer, const KvBlockTable& table,
                            int64_t pos0, int64_t n_tokens, DispatchLabel label) {
  INFERSCOPE_RETURN_IF_ERROR(check_store(layout, table, pos0, n_tokens));
  if (n_tokens == 0) return Status::ok();
  INFERSCOPE_BIND_WORDS(tb, device, table.device, table.ids.size(), "kv_store", "block table");
  return record_store_part(device, recorder, src, cache, layout, part, layer, tb, pos0, n_tokens, label);
}

Status check_block_copies(const KvCacheLayout& layout, std::span<const BlockCopy> copies) {
  const KvLayout& kv = layout.kv;
  std::vector<BlockId> to;
  to.reserve(copies.size());
  for (const BlockCopy& c : copies) {
    if (c.from < 0 || c.from >= kv.n_blocks || c.to < 0 || c.to >= kv.n_blocks || c.from == c.to) {
      return Status::error("kv_copy: blocks " + std::to_string(c.from) + " -> " + std::to_string(c.to) +
                           " must be two different blocks of the pool of " + std::to_string(kv.n_blocks));
    }
    if (c.rows < 0 || c.rows > kv.block_size) {
      return Status::error("kv_copy: " + std::to_string(c.rows) + " rows of a block of " +
                           std::to_string(kv.block_size));
    }
    to.push_back(c.to);
  }
  std::sort(to.begin(), to.end());
  if (std::adjacent_find(to.begin(), to.end()) != to.end()) return Status::error("kv_copy: a block is copied into twice");
  for (const BlockCopy& c : copies) {
    if (std::binary_search(to.begin(), to.end(), c.from)) {
      return Status::error("kv_copy: block " + std::to_string(c.from) + " is both copied from and into");
    }
  }
  return Status::ok();
}

void record_kv_copy(Recorder& recorder, const BufferSpan& cache, const KvCacheLayout& layout, KvPart part,
                    int64_t layer, std::span<const BlockCopy> copies) {
  const uint64_t row_bytes = layout.row_bytes(part);
  const auto block_size = static_cast<uint64_t>(layout.kv.block_size);
  const uint64_t layer0 = cache.offset + layout.row_byte(part, layer, 0);
  std::vector<VkBufferCopy> regions;
  regions.reserve(copies.size());
  for (const BlockCopy& c : copies) {
    if (c.rows == 0) continue;
    regions.push_back({layer0 + static_cast<uint64_t>(c.from) * block_size * row_bytes,
                       layer0 + static_cast<uint64_t>(c.to) * block_size * row_bytes,
                       static_cast<uint64_t>(c.rows) * row_bytes});
  }
  recorder.copy_regions(*cache.buffer, *cache.buffer, regions);
}

}  // namespace inferscope::vulkan
