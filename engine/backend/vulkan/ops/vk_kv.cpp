#include "engine/backend/vulkan/ops/vk_kv.h"

#include <algorithm>
#include <string>

#include "engine/backend/vulkan/ops/vk_op_util.h"

namespace inferscope::vulkan {

namespace {

struct KvStorePush {
  uint32_t n_tokens;
  uint32_t row_words;
  uint32_t dst_word0;
  uint32_t k_off, v_off;
};

}  // namespace

Result<KvLayerBinding> kv_layer_binding(const Device& device, const BufferSpan& cache, const KvCacheLayout& layout,
                                        int slot, int64_t layer, const char* op, const char* what) {
  const std::string where = std::string(op) + ": " + what;
  if (!cache.buffer) return Status::error(where + " has no buffer");
  if (layout.n_embd_kv <= 0 || layout.n_embd_kv % 2 != 0 || layout.n_ctx <= 0) {
    return Status::error(where + ": the cache layout needs an even n_embd_kv and a positive n_ctx");
  }
  if (slot < 0 || layer < 0 || layer >= layout.n_layer) return Status::error(where + ": slot or layer out of range");
  if (cache.offset % 4 != 0) return Status::error(where + " must start at a multiple of 4 bytes");
  const uint64_t layer_bytes = static_cast<uint64_t>(layout.n_ctx) * layout.n_embd_kv * 2;
  const uint64_t start = layout.row_half(slot, layer, 0) * 2;  // bytes from the span's start
  if (start + layer_bytes > cache.bytes()) {
    return Status::error(where + " holds " + std::to_string(cache.bytes()) + " bytes; slot " + std::to_string(slot) +
                         " layer " + std::to_string(layer) + " ends at byte " + std::to_string(start + layer_bytes));
  }
  const uint64_t align = std::max<uint64_t>(device.info().min_storage_buffer_offset_alignment, 4);
  const uint64_t absolute = cache.offset + start;
  const uint64_t bind_offset = absolute / align * align;
  if (bind_offset < cache.offset) return Status::error(where + " starts at a misaligned offset");
  KvLayerBinding b;
  b.span = {cache.buffer, bind_offset, absolute - bind_offset + layer_bytes};
  b.word0 = static_cast<uint32_t>((absolute - bind_offset) / 4);
  INFERSCOPE_RETURN_IF_ERROR(check_u32(b.span.size / 4, op, "one layer's cache words"));
  INFERSCOPE_RETURN_IF_ERROR(check_span(device, b.span, b.span.size, op, what));
  return b;
}

Status record_kv_store(Device& device, Recorder& recorder, BufferSpan k, BufferSpan v, BufferSpan k_cache,
                       BufferSpan v_cache, const KvCacheLayout& layout, int slot, int64_t layer, int64_t pos0,
                       int64_t n_tokens, DispatchLabel label) {
  constexpr const char* kOp = "kv_store";
  if (n_tokens < 0 || pos0 < 0) return Status::error("kv_store: negative size or position");
  if (pos0 + n_tokens > layout.n_ctx) {
    return Status::error("kv_store: positions " + std::to_string(pos0) + " + " + std::to_string(n_tokens) +
                         " exceed the cache's n_ctx of " + std::to_string(layout.n_ctx));
  }
  auto kb = kv_layer_binding(device, k_cache, layout, slot, layer, kOp, "k_cache");
  if (!kb) return kb.status();
  auto vb = kv_layer_binding(device, v_cache, layout, slot, layer, kOp, "v_cache");
  if (!vb) return vb.status();
  if (kb->word0 != vb->word0) return Status::error("kv_store: k_cache and v_cache spans differ in alignment");
  if (n_tokens == 0) return Status::ok();
  const uint64_t src_floats = static_cast<uint64_t>(n_tokens * layout.n_embd_kv);
  INFERSCOPE_RETURN_IF_ERROR(check_u32(2 * n_tokens * layout.n_embd_kv, kOp, "2 * n_tokens * n_embd_kv"));
  INFERSCOPE_BIND_WORDS(ksrc, device, k, src_floats, kOp, "k");
  INFERSCOPE_BIND_WORDS(vsrc, device, v, src_floats, kOp, "v");
  const uint32_t row_words = static_cast<uint32_t>(layout.n_embd_kv / 2);
  const KvStorePush push{static_cast<uint32_t>(n_tokens), row_words, kb->word0 + static_cast<uint32_t>(pos0) * row_words,
                         ksrc.first, vsrc.first};
  const uint32_t wg = op_workgroup_size(device, 256);
  const uint32_t spec[] = {wg};
  auto kernel = device.kernel("kv_store", 4, spec);
  if (!kernel) return kernel.status();
  const uint64_t pairs = 2 * static_cast<uint64_t>(n_tokens) * row_words;
  recorder.dispatch(**kernel, {ksrc.span, vsrc.span, kb->span, vb->span}, push,
                    op_group_count(device, pairs, wg), 1, 1, label);
  return Status::ok();
}

}  // namespace inferscope::vulkan
