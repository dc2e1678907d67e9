#include "engine/backend/vulkan/ops/vk_kv_rotate.h"

#include <algorithm>
#include <string>
#include <vector>

#include "engine/backend/vulkan/ops/vk_op_util.h"

namespace inferscope::vulkan {

namespace {

struct KvRotatePush {
  uint32_t n_rows;
  uint32_t row0;
  uint32_t n_head_kv;
  uint32_t head_dim;
  uint32_t n_rot;
  uint32_t neox;
  uint32_t has_freq_factors;
  int32_t delta;
  RopeAnglePush angles;
  uint32_t byte0;
  uint32_t row_bytes;
  uint32_t block_shift;
  uint32_t table_off;
  uint32_t out_off;
  uint32_t ff_off;
};

constexpr int64_t kMaxRot = 1024;  // kv_rotate.comp's shared angle arrays hold 512 pairs

Status check_dims(const KvCacheLayout& layout, const RopeDims& dims, int64_t delta) {
  const int64_t n_embd_kv = layout.values();
  if (dims.n_head_kv <= 0 || dims.head_dim <= 0 || dims.head_dim % 2 != 0 || dims.n_head_kv * dims.head_dim != n_embd_kv) {
    return Status::error("kv_rotate: " + std::to_string(dims.n_head_kv) + " heads of " + std::to_string(dims.head_dim) +
                         " values (even) must make the layer's " + std::to_string(n_embd_kv) + " values of a row");
  }
  if (dims.n_rot <= 0 || dims.n_rot % 2 != 0 || dims.n_rot > dims.head_dim || dims.n_rot > kMaxRot) {
    return Status::error("kv_rotate: n_rot = " + std::to_string(dims.n_rot) +
                         " must be even, positive, at most head_dim (" + std::to_string(dims.head_dim) +
                         ") and at most " + std::to_string(kMaxRot));
  }
  if (delta <= -(int64_t{1} << 24) || delta >= (int64_t{1} << 24)) {
    return Status::error("kv_rotate: a delta of " + std::to_string(delta) + " positions is not exact in F32");
  }
  const kernels::KvType type = layout.type(KvPart::K);
  INFERSCOPE_RETURN_IF_ERROR(check_kv_type(type));
  if (n_embd_kv % kernels::kv_row_granule(type) != 0) {
    return Status::error("kv_rotate: rows of " + std::string(kernels::kv_type_name(type)) +
                         " need n_embd_kv to be a multiple of " + std::to_string(kernels::kv_row_granule(type)));
  }
  return Status::ok();
}

// Rows rewritten in place must be rewritten once: the list names each block once.
Status check_distinct(std::span<const int32_t> ids) {
  std::vector<int32_t> sorted(ids.begin(), ids.end());
  std::sort(sorted.begin(), sorted.end());
  const auto twice = std::adjacent_find(sorted.begin(), sorted.end());
  if (twice != sorted.end()) return Status::error("kv_rotate: block " + std::to_string(*twice) + " is listed twice");
  return Status::ok();
}

}  // namespace

Status record_kv_rotate(Device& device, Recorder& recorder, BufferSpan k_cache, const KvCacheLayout& layout,
                        int64_t layer, const KvBlockTable& blocks, BufferSpan freq_factors, const RopeDims& dims,
                        const kernels::RopeParams& params, int64_t delta, BufferSpan scratch, DispatchLabel label) {
  constexpr const char* kOp = "kv_rotate";
  INFERSCOPE_RETURN_IF_ERROR(check_dims(layout, dims, delta));
  INFERSCOPE_RETURN_IF_ERROR(check_distinct(blocks.ids));
  const int64_t n_embd_kv = layout.values();
  const int64_t rows = static_cast<int64_t>(blocks.ids.size()) * layout.kv.block_size;
  INFERSCOPE_RETURN_IF_ERROR(check_block_table(layout, blocks, rows, kOp));
  INFERSCOPE_RETURN_IF_ERROR(check_u32(rows, kOp, "rows"));
  auto cb = kv_layer_binding(device, k_cache, layout, KvPart::K, layer, kOp, "k_cache");
  if (!cb) return cb.status();
  if (rows == 0) return Status::ok();
  if (!scratch.buffer) return Status::error("kv_rotate: no scratch buffer");
  const uint64_t row_floats = static_cast<uint64_t>(n_embd_kv);
  const uint64_t bindable = std::min<uint64_t>(scratch.bytes(), device.max_storage_buffer_range());
  const int64_t pass_rows = std::min<int64_t>(rows, static_cast<int64_t>(bindable / (row_floats * sizeof(float))));
  if (pass_rows == 0) {
    return Status::error("kv_rotate: the scratch of " + std::to_string(scratch.bytes()) + " bytes holds no row of " +
                         std::to_string(n_embd_kv) + " floats");
  }
  INFERSCOPE_RETURN_IF_ERROR(check_u32(pass_rows * n_embd_kv, kOp, "scratch values"));
  INFERSCOPE_BIND_WORDS(tb, device, blocks.device, blocks.ids.size(), kOp, "block list");
  BoundSpan f_bind;
  const bool has_factors = freq_factors.buffer != nullptr;
  if (has_factors) {
    auto b = bind_words(device, freq_factors, static_cast<uint64_t>(dims.n_rot / 2), kOp, "freq_factors");
    if (!b) return b.status();
    f_bind = *b;
  } else {
    f_bind = tb;  // never read
  }

  kernels::RopeParams rotation = params;
  rotation.attn_factor = 1.0f;
  KvRotatePush push{};
  push.n_head_kv = static_cast<uint32_t>(dims.n_head_kv);
  push.head_dim = static_cast<uint32_t>(dims.head_dim);
  push.n_rot = static_cast<uint32_t>(dims.n_rot);
  push.neox = dims.neox ? 1u : 0u;
  push.has_freq_factors = has_factors ? 1u : 0u;
  push.delta = static_cast<int32_t>(delta);
  push.angles = rope_angle_push(rotation, dims.n_rot);
  push.byte0 = cb->byte0;
  push.row_bytes = static_cast<uint32_t>(layout.row_bytes(KvPart::K));
  push.block_shift = layout.block_shift();
  push.table_off = tb.first;
  push.ff_off = f_bind.first;
  const uint32_t wg = op_workgroup_size(device, 256);
  const uint32_t spec[] = {wg};
  auto kernel = device.kernel("kv_rotate_" + std::string(kernels::kv_type_name(layout.type(KvPart::K))), 4, spec);
  if (!kernel) return kernel.status();
  for (int64_t row0 = 0; row0 < rows; row0 += pass_rows) {
    const int64_t n = std::min(pass_rows, rows - row0);
    INFERSCOPE_BIND_WORDS(sb, device, scratch, static_cast<uint64_t>(n) * row_floats, kOp, "scratch");
    push.n_rows = static_cast<uint32_t>(n);
    push.row0 = static_cast<uint32_t>(row0);
    push.out_off = sb.first;
    const uint64_t pairs = static_cast<uint64_t>(n) * row_floats / 2;
    recorder.dispatch(**kernel, {cb->span, sb.span, f_bind.span, tb.span}, push, op_group_count(device, pairs, wg), 1, 1,
                      label);
    // The rotated rows back into the same rows, encoded by kv_store.
    INFERSCOPE_RETURN_IF_ERROR(
        record_kv_store_part(device, recorder, scratch, k_cache, layout, KvPart::K, layer, blocks, row0, n, label));
  }
  return Status::ok();
}

}  // namespace inferscope::vulkan
