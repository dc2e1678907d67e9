#include "engine/kv/kv_layout.h"

namespace inferscope {

std::string kv_types_label(KvTypes types) {
  const std::string k(kernels::kv_type_name(types.k)), v(kernels::kv_type_name(types.v));
  return types.k == types.v ? k : "k " + k + ", v " + v;
}

Result<KvType> parse_kv_type_name(const std::string& name) {
  KvType type;
  if (kernels::parse_kv_type(name, &type)) return type;
  return Result<KvType>::error("unknown KV cache type '" + name + "' (one of f16, q8_0, q4_0, nf4, int4)");
}

KvLayout KvLayout::for_model(const KvRowShape& rows, int64_t n_ctx, int n_slots, KvTypes types, int32_t block_size,
                             int64_t max_batch, bool with_window_pool) {
  KvLayout kv{types, rows.n_layer, rows.n_embd_kv, block_size, n_slots * blocks_for(n_ctx, block_size), {}, 0,
              rows.rowless_layer};
  if (!with_window_pool || rows.window <= 0 || rows.window_layer.empty()) return kv;
  const int64_t window_blocks = (n_slots + 1) * window_blocks_per_slot(rows.window, max_batch, block_size);
  if (window_blocks >= kv.n_blocks) return kv;
  kv.window_layer = rows.window_layer;
  kv.window_blocks = window_blocks;
  return kv;
}

int64_t KvLayout::layers_in(KvPool pool) const {
  int64_t count = 0;
  for (int64_t l = 0; l < n_layer; ++l) count += pool_of(l) == pool ? 1 : 0;
  return count;
}

Status check_kv_types(const KvRowShape& rows, KvTypes types) {
  for (const KvType t : {types.k, types.v}) {
    const int64_t granule = kernels::kv_row_granule(t);
    const int64_t n = rows.n_embd_kv_window % granule != 0 ? rows.n_embd_kv_window : rows.n_embd_kv;
    if (n % granule != 0) {
      return Status::error("KV cache type " + std::string(kernels::kv_type_name(t)) + " stores rows in blocks of " +
                           std::to_string(granule) + " values, but this model's KV rows have " + std::to_string(n) +
                           " (n_head_kv x head_dim); f16 works with every model");
    }
  }
  return Status::ok();
}

Status check_kv_block_size(int32_t block_size) {
  if (block_size >= 16 && block_size <= 256 && (block_size & (block_size - 1)) == 0) return Status::ok();
  return Status::error("KV block size " + std::to_string(block_size) + " is not one of 16, 32, 64, 128, 256");
}

}  // namespace inferscope
