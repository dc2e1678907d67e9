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

KvLayout KvLayout::for_model(const KvRowShape& rows, int64_t n_ctx, int n_slots, KvTypes types,
                             int32_t block_size) {
  return KvLayout{types, rows.n_layer, rows.n_embd_kv, block_size, n_slots * blocks_for(n_ctx, block_size)};
}

Status check_kv_types(const KvRowShape& rows, KvTypes types) {
  const int64_t n = rows.n_embd_kv;
  for (const KvType t : {types.k, types.v}) {
    const int64_t granule = kernels::kv_row_granule(t);
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
