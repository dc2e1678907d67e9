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
#include <vector>

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
// of n_layer layers (ModelConfig::kv_rows()), but for its rowless layers (rowless_layer[l] == 1:
// a hybrid model's Gated DeltaNet layers, whose memory is a state per sequence,
// engine/kv/recurrent_layout.h, and Gemma 4's shared-KV layers, which read an earlier layer's
// rows). Sliding-window layers (window_layer[l] == 1) see only the last `window` positions;
// with n_embd_kv_window > 0 (gemma4's smaller window heads) they use that many of each row's
// values, the rows staying n_embd_kv wide.
struct KvRowShape {
  int64_t n_layer = 0;
  int64_t n_embd_kv = 0;
  std::vector<uint8_t> window_layer;  // per layer; empty: no sliding-window layer
  int64_t window = 0;
  std::vector<uint8_t> rowless_layer;  // per layer; empty: every layer keeps KV rows
  int64_t n_embd_kv_window = 0;
};

// The pools of blocks: every layer's rows live in the main one, but for the sliding-window
// layers when the layout gives them a window pool; a rowless layer has none (KvPool::None).
enum class KvPool { Main, Window, None };

struct KvLayout {
  KvTypes types;
  int64_t n_layer = 0;
  int64_t n_embd_kv = 0;
  int32_t block_size = kDefaultKvBlockSize;
  int64_t n_blocks = 0;  // the main pool's
  // The window pool: the sliding-window layers keep only what their window sees, in a pool of
  // window_blocks blocks of their own (engine/graph/kv_slots.h lets go of the blocks no query
  // sees any more). window_blocks == 0: no window pool, every layer in the main pool.
  std::vector<uint8_t> window_layer;  // per layer: 1 when its rows are in the window pool
  int64_t window_blocks = 0;
  std::vector<uint8_t> rowless_layer;  // per layer: 1 when it keeps no rows; empty: none such

  // The pools that hold n_slots whole contexts of n_ctx positions in chunks of up to max_batch
  // rows; with with_window_pool, the sliding-window layers' pool holds each slot's window, the
  // rows of two chunks more (the one written, and one a caller may truncate back over), and one
  // slot's worth more for cached prefixes, when that is less than the main pool.
  static KvLayout for_model(const KvRowShape& rows, int64_t n_ctx, int n_slots, KvTypes types,
                            int32_t block_size = kDefaultKvBlockSize, int64_t max_batch = 1,
                            bool with_window_pool = false);
  // Blocks of block_size positions that n_ctx positions need.
  static int64_t blocks_for(int64_t n_ctx, int32_t block_size) { return (n_ctx + block_size - 1) / block_size; }
  // A window pool's blocks per slot, for the window and two chunks of max_batch rows.
  static int64_t window_blocks_per_slot(int64_t window, int64_t max_batch, int32_t block_size) {
    return blocks_for(window + 2 * max_batch, block_size) + 2;
  }

  bool has_window_pool() const { return window_blocks > 0; }
  KvPool pool_of(int64_t layer) const {
    if (!rowless_layer.empty() && rowless_layer[static_cast<size_t>(layer)]) return KvPool::None;
    return has_window_pool() && window_layer[static_cast<size_t>(layer)] ? KvPool::Window : KvPool::Main;
  }
  int64_t blocks_in(KvPool pool) const {
    return pool == KvPool::Window ? window_blocks : pool == KvPool::Main ? n_blocks : 0;
  }
  int64_t layers_in(KvPool pool) const;
  int64_t rows() const { return n_blocks * block_size; }  // rows per layer of the main pool
  int64_t rows_of_layer(int64_t layer) const { return blocks_in(pool_of(layer)) * block_size; }

  int64_t k_row_bytes() const { return kernels::kv_row_bytes(types.k, n_embd_kv); }
  int64_t v_row_bytes() const { return kernels::kv_row_bytes(types.v, n_embd_kv); }
  // K and V of every layer of `pool` for one position, scales included.
  uint64_t bytes_per_row(KvPool pool) const {
    return static_cast<uint64_t>(layers_in(pool)) * static_cast<uint64_t>(k_row_bytes() + v_row_bytes());
  }
  // One block of the main pool (every layer it holds).
  uint64_t bytes_per_block() const { return bytes_per_row(KvPool::Main) * static_cast<uint64_t>(block_size); }
  // Both pools.
  uint64_t bytes() const {
    return bytes_per_row(KvPool::Main) * static_cast<uint64_t>(rows()) +
           bytes_per_row(KvPool::Window) * static_cast<uint64_t>(window_blocks * block_size);
  }
};

// Whether a model's KV rows can be stored as `types` (a quantized type needs n_embd_kv, the
// values of a row, to be a multiple of its 32-value blocks); the error names the type and size.
Status check_kv_types(const KvRowShape& rows, KvTypes types);
// Block sizes are powers of two from 16 to 256 (attention finds a row with a shift and a mask).
Status check_kv_block_size(int32_t block_size);

}  // namespace inferscope
