#include "engine/backend/vulkan/ops/vk_kv.h"

#include <algorithm>
#include <string>

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

namespace {

struct KvStorePush {
  uint32_t n_items;   // F16: pairs of values; quantized: 32-value blocks
  uint32_t dst_byte;  // byte of (slot, layer, pos0)'s row in the cache binding
  uint32_t src_off;   // first element of the source in its binding
};

// Encodes one F32 source as rows of `part` at positions pos0.. of (slot, layer).
Status record_store_part(Device& device, Recorder& recorder, BufferSpan src, BufferSpan cache,
                         const KvCacheLayout& layout, KvPart part, int slot, int64_t layer, int64_t pos0,
                         int64_t n_tokens, DispatchLabel label) {
  constexpr const char* kOp = "kv_store";
  const kernels::KvType type = layout.type(part);
  const char* what = part == KvPart::K ? "k_cache" : "v_cache";
  auto cb = kv_layer_binding(device, cache, layout, part, slot, layer, kOp, what);
  if (!cb) return cb.status();
  if (layout.n_embd_kv % kernels::kv_row_granule(type) != 0) {
    return Status::error(std::string("kv_store: ") + what + " rows of " + std::string(kernels::kv_type_name(type)) +
                         " need n_embd_kv to be a multiple of " + std::to_string(kernels::kv_row_granule(type)));
  }
  if (n_tokens == 0) return Status::ok();
  const uint64_t values = static_cast<uint64_t>(n_tokens * layout.n_embd_kv);
  INFERSCOPE_BIND_WORDS(sb, device, src, values, kOp, part == KvPart::K ? "k" : "v");
  const uint64_t items = values / static_cast<uint64_t>(type == kernels::KvType::F16 ? 2 : kernels::kKvBlock);
  const KvStorePush push{static_cast<uint32_t>(items),
                         cb->byte0 + static_cast<uint32_t>(static_cast<uint64_t>(pos0) * layout.row_bytes(part)),
                         sb.first};
  const uint32_t wg = op_workgroup_size(device, type == kernels::KvType::F16 ? 256 : 64);
  const uint32_t spec[] = {wg};
  auto kernel = device.kernel("kv_store_" + std::string(kernels::kv_type_name(type)), 2, spec);
  if (!kernel) return kernel.status();
  recorder.dispatch(**kernel, {sb.span, cb->span}, push, op_group_count(device, items, wg), 1, 1, label);
  return Status::ok();
}

}  // namespace

Result<KvLayerBinding> kv_layer_binding(const Device& device, const BufferSpan& cache, const KvCacheLayout& layout,
                                        KvPart part, int slot, int64_t layer, const char* op, const char* what) {
  const std::string where = std::string(op) + ": " + what;
  if (!cache.buffer) return Status::error(where + " has no buffer");
  if (layout.n_embd_kv <= 0 || layout.n_embd_kv % 2 != 0 || layout.n_ctx <= 0) {
    return Status::error(where + ": the cache layout needs an even n_embd_kv and a positive n_ctx");
  }
  if (slot < 0 || layer < 0 || layer >= layout.n_layer) return Status::error(where + ": slot or layer out of range");
  if (cache.offset % 4 != 0) return Status::error(where + " must start at a multiple of 4 bytes");
  const uint64_t layer_bytes = static_cast<uint64_t>(layout.n_ctx) * layout.row_bytes(part);
  const uint64_t start = layout.row_byte(part, slot, layer, 0);  // bytes from the span's start
  const uint64_t end = (start + layer_bytes + 3) / 4 * 4;          // the binding's end, a whole word
  if (end > cache.bytes()) {
    return Status::error(where + " holds " + std::to_string(cache.bytes()) + " bytes; slot " + std::to_string(slot) +
                         " layer " + std::to_string(layer) + " ends at byte " + std::to_string(end));
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

Status record_kv_store(Device& device, Recorder& recorder, BufferSpan k, BufferSpan v, BufferSpan k_cache,
                       BufferSpan v_cache, const KvCacheLayout& layout, int slot, int64_t layer, int64_t pos0,
                       int64_t n_tokens, DispatchLabel label) {
  if (n_tokens < 0 || pos0 < 0) return Status::error("kv_store: negative size or position");
  if (pos0 + n_tokens > layout.n_ctx) {
    return Status::error("kv_store: positions " + std::to_string(pos0) + " + " + std::to_string(n_tokens) +
                         " exceed the cache's n_ctx of " + std::to_string(layout.n_ctx));
  }
  INFERSCOPE_RETURN_IF_ERROR(check_u32(n_tokens * layout.n_embd_kv, "kv_store", "n_tokens * n_embd_kv"));
  INFERSCOPE_RETURN_IF_ERROR(
      record_store_part(device, recorder, k, k_cache, layout, KvPart::K, slot, layer, pos0, n_tokens, label));
  return record_store_part(device, recorder, v, v_cache, layout, KvPart::V, slot, layer, pos0, n_tokens, label);
}

}  // namespace inferscope::vulkan
