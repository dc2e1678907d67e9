// The shape of a KV cache, shared by every backend, the memory estimate and the UI: the storage
// type of K and of V (chosen independently; kernels/formats/kv_type.h gives their encodings),
// and per layer a pool of n_blocks blocks of block_size rows, one row per position of n_embd_kv
// values (all KV heads), encoded as a whole in blocks of 32 values for the quantized types.
// Which sequence owns which block is the forward pass's bookkeeping (engine/kv/block_pool.h,
// block_table.h); backends own the storage and the kernels: row r of a layer's K (V) storage
// is block r / block_size's row r % block_size.
#pragma once

#include <cstdint>
#include <string>

#include "engine/core/status.h"
#include "kernels/formats/kv_type.h"

namespace inferscope {

using kernels::KvType;

struct KvTypes {
  KvType k = KvType::F16;
  KvType v = KvType::F16;

  bool operator==(const KvTypes&) const = default;
};

// "f16", or "k q8_0, v f16" when the two differ.
std::string kv_types_label(KvTypes types);

// Parses llama.cpp's --cache-type names ("f16", "q8_0", "q4_0", and ours "nf4", "int4"); the
// error lists them.
Result<KvType> parse_kv_type_name(const std::string& name);

// Positions per KV block unless chosen (--kv-block-size): small enough that a sequence wastes
// under a block, large enough for the block table to stay short.
constexpr int32_t kDefaultKvBlockSize = 16;

// What a model stores per position: a K and a V row of n_embd_kv values (all KV heads) in each
// of n_layer layers (ModelConfig::kv_rows()).
struct KvRowShape {
  int64_t n_layer = 0;
  int64_t n_embd_kv = 0;
};

struct KvLayout {
  KvTypes types;
  int64_t n_layer = 0;
  int64_t n_embd_kv = 0;
  int32_t block_size = kDefaultKvBlockSize;
  int64_t n_blocks = 0;

  // The pool that holds n_slots whole contexts of n_ctx positions.
  static KvLayout for_model(const KvRowShape& rows, int64_t n_ctx, int n_slots, KvTypes types,
                            int32_t block_size = kDefaultKvBlockSize);
  // Blocks of block_size positions that n_ctx positions need.
  static int64_t blocks_for(int64_t n_ctx, int32_t block_size) { return (n_ctx + block_size - 1) / block_size; }

  int64_t rows() const { return n_blocks * block_size; }  // rows per layer

  int64_t k_row_bytes() const { return kernels::kv_row_bytes(types.k, n_embd_kv); }
  int64_t v_row_bytes() const { return kernels::kv_row_bytes(types.v, n_embd_kv); }
  // K and V of every layer for one position of one slot, scales included.
  uint64_t bytes_per_position() const {
    return static_cast<uint64_t>(n_layer) * static_cast<uint64_t>(k_row_bytes() + v_row_bytes());
  }
  // One block of every layer.
  uint64_t bytes_per_block() const { return bytes_per_position() * static_cast<uint64_t>(block_size); }
  // The whole pool.
  uint64_t bytes() const { return bytes_per_position() * static_cast<uint64_t>(rows()); }
};

// Whether a model's KV rows can be stored as `types` (a quantized type needs n_embd_kv, the
// values of a row, to be a multiple of its 32-value blocks); the error names the type and size.
Status check_kv_types(const KvRowShape& rows, KvTypes types);
// Block sizes are powers of two from 16 to 256 (attention finds a row with a shift and a mask).
Status check_kv_block_size(int32_t block_size);

}  // namespace inferscope
