// The shape of a KV cache, shared by every backend, the memory estimate and the UI: the storage
// type of K and of V (chosen independently; kernels/formats/kv_type.h gives their encodings), and
// for each sequence slot and layer one row per position of n_embd_kv values (all KV heads),
// encoded as a whole in blocks of 32 for the quantized types. Backends own the storage and the
// kernels; how many positions a slot holds is the forward pass's bookkeeping.
#pragma once

#include <cstdint>
#include <string>

#include "engine/core/status.h"
#include "engine/model/model_config.h"
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

struct KvLayout {
  KvTypes types;
  int64_t n_layer = 0;
  int64_t n_embd_kv = 0;
  int64_t n_ctx = 0;
  int n_slots = 1;

  static KvLayout for_model(const ModelConfig& config, int64_t n_ctx, int n_slots, KvTypes types);

  int64_t k_row_bytes() const { return kernels::kv_row_bytes(types.k, n_embd_kv); }
  int64_t v_row_bytes() const { return kernels::kv_row_bytes(types.v, n_embd_kv); }
  // K and V of every layer for one position of one slot, scales included.
  uint64_t bytes_per_position() const {
    return static_cast<uint64_t>(n_layer) * static_cast<uint64_t>(k_row_bytes() + v_row_bytes());
  }
  // The whole cache: every position of every slot.
  uint64_t bytes() const { return bytes_per_position() * static_cast<uint64_t>(n_ctx) * static_cast<uint64_t>(n_slots); }
};

// Whether a model's KV rows can be stored as `types` (a quantized type needs n_embd_kv, the
// values of a row, to be a multiple of its 32-value blocks); the error names the type and size.
Status check_kv_types(const ModelConfig& config, KvTypes types);

}  // namespace inferscope
