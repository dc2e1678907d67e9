// The Vulkan backend's device buffers for chunks of up to max_batch rows (VulkanOps): the plan's
// activations (ActivationPlan, as every backend sizes them), and what only this backend keeps:
// the token ids and add_rows' id lists the host writes, the experts' choices and weights (and a
// host-visible copy of each layer's choices, for the profile's counts), the chunk's block tables,
// the int8 copies of product inputs, the partial results of decode attention split over the KV
// range, and a host-visible copy of the logits.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "engine/backend/backend_ops.h"
#include "engine/backend/vulkan/vk_buffer.h"
#include "engine/backend/vulkan/vk_device.h"
#include "engine/core/status.h"
#include "engine/model/model_config.h"

namespace inferscope::vulkan {

struct ChunkBuffers {
  // add_rows calls recorded in one chunk at most: each has its own id list in row_ids (the lists
  // are read when the chunk runs).
  static constexpr uint64_t kRowLookups = 2;

  // `id_lists`: the token id lists the lookups of one chunk write, one per device part of each
  // table looked up (the token embeddings; gemma4's per-layer inputs).
  static Result<std::unique_ptr<ChunkBuffers>> create(Device& device, const ForwardPlan& plan, const ModelConfig& config,
                                                      int64_t id_lists);
  // What they take, without the few that depend on the device (for the fit check).
  static uint64_t bytes_needed(const ForwardPlan& plan, const ModelConfig& config);
  // The widest output row a plan can ask for (logits; token states are narrower).
  static uint64_t logits_row_bytes(const ModelConfig& config);

  std::array<std::unique_ptr<Buffer>, kActCount> act;  // [rows][width] F32 each (Logits too)
  // Token ids, host-visible (written before submit): per lookup and part of its table, the ids
  // relative to the part's first row, or -1 for ids in other parts; id_lists lists token_stride
  // apart.
  std::unique_ptr<Buffer> tokens;
  int64_t id_lists = 0;
  std::unique_ptr<Buffer> row_ids;  // add_rows' id lists, host-visible: kRowLookups lists token_stride apart
  uint64_t token_stride = 0;        // bytes between two id lists
  std::unique_ptr<Buffer> expert_ids;       // [max_batch][k] int32
  std::unique_ptr<Buffer> expert_ids_host;  // [n_layer][max_batch][k] int32, host-visible: each layer's choices
  std::unique_ptr<Buffer> expert_w;         // [max_batch][k]
  std::unique_ptr<Buffer> logits_host;      // [max_batch][plan.output_width], host-visible copy of Logits
  // The block tables of the chunk's spans back to back (room for 2 * n_slots tables of
  // ceil(n_ctx / block_size) int32 entries, twice that with a window pool: the spans' main
  // tables, then their window tables), written in begin_chunk(): directly where the device
  // buffer is host-visible, else through block_table_staging and a copy at the start of the
  // recording. kv_rotate writes its list of blocks there too.
  std::unique_ptr<Buffer> block_table, block_table_staging;
  std::unique_ptr<Buffer> attention_split;  // partial results of decode attention split over the KV range
  // Inputs of int8 products, quantized (vk_quantize.h): q8_h the normalized rows ([max_batch]
  // [n_embd], written by rms_norm), q8_b the others (attention output, GLU outputs).
  std::unique_ptr<Buffer> q8_h, q8_b;
  uint64_t bytes = 0;  // all of them
};

}  // namespace inferscope::vulkan
