#include "engine/backend/vulkan/vk_chunk_buffers.h"

#include <algorithm>

#include "engine/backend/vulkan/ops/vk_attention.h"
#include "engine/backend/vulkan/ops/vk_quantize.h"

namespace inferscope::vulkan {

namespace {

// Entries of the block table buffer: a chunk has at most two spans per slot (a sequence's body
// and its last row), each with its table of a whole context's blocks (at least one), and as
// many again with a window pool (its tables cover the same positions).
uint64_t block_table_capacity(const ForwardPlan& plan) {
  const auto entries = static_cast<uint64_t>(std::max<int64_t>(1, KvLayout::blocks_for(plan.n_ctx, plan.kv.block_size)));
  const uint64_t pools = plan.kv.has_window_pool() ? 2 : 1;
  return pools * 2 * static_cast<uint64_t>(std::max(1, plan.n_slots)) * entries;
}

// The host-visible copy of every layer's expert choices in a chunk (the profile's counts).
uint64_t expert_choice_bytes(const ModelConfig& c, int64_t max_batch) {
  return c.is_moe() ? static_cast<uint64_t>(c.n_layer * max_batch * c.n_expert_used) * sizeof(int32_t) : 0;
}

}  // namespace

uint64_t ChunkBuffers::logits_row_bytes(const ModelConfig& c) {
  return static_cast<uint64_t>(std::max(c.n_vocab, c.n_embd)) * sizeof(float);
}

uint64_t ChunkBuffers::bytes_needed(const ForwardPlan& plan, const ModelConfig& c) {
  return plan.acts.activation_bytes() + 2 * static_cast<uint64_t>(plan.max_batch) * logits_row_bytes(c) +
         2 * block_table_capacity(plan) * sizeof(BlockId) + expert_choice_bytes(c, plan.max_batch);
}

Result<std::unique_ptr<ChunkBuffers>> ChunkBuffers::create(Device& device, const ForwardPlan& plan,
                                                           const ModelConfig& c, int64_t id_lists) {
  auto buffers = std::make_unique<ChunkBuffers>();
  ChunkBuffers& a = *buffers;
  const ActivationPlan& p = plan.acts;
  const int64_t B = plan.max_batch, E = c.n_embd;
  const int64_t K = std::max<int64_t>(1, c.n_expert_used);
  auto make = [&](std::unique_ptr<Buffer>& b, int64_t elements, MemoryUse use = MemoryUse::Scratch) -> Status {
    auto r = device.create_buffer(static_cast<uint64_t>(std::max<int64_t>(1, elements)) * 4, use);
    if (!r) return r.status();
    b = std::move(*r);
    a.bytes += b->size();
    return Status::ok();
  };
  a.token_stride = (static_cast<uint64_t>(B) * 4 + 255) / 256 * 256;
  a.id_lists = id_lists;
  INFERSCOPE_RETURN_IF_ERROR(make(a.tokens, static_cast<int64_t>(a.token_stride / 4) * id_lists, MemoryUse::Staging));
  if (c.is_encoder()) {
    INFERSCOPE_RETURN_IF_ERROR(make(a.row_ids, static_cast<int64_t>(a.token_stride / 4 * kRowLookups), MemoryUse::Staging));
  }
  for (size_t i = 0; i < kActCount; ++i) INFERSCOPE_RETURN_IF_ERROR(make(a.act[i], p.acts[i].floats()));
  INFERSCOPE_RETURN_IF_ERROR(make(a.expert_ids, B * K));
  INFERSCOPE_RETURN_IF_ERROR(make(a.expert_ids_host, c.is_moe() ? c.n_layer * B * K : 1, MemoryUse::Staging));
  INFERSCOPE_RETURN_IF_ERROR(make(a.expert_w, B * K));
  // The int8 copies: of H (rms_norm's output), and of the widest other product input.
  uint64_t q8_bytes = 4;
  for (Act input : {Act::Attn, Act::FfnA, Act::ExpertA}) {
    const ActShape& shape = p[input];
    if (shape.rows > 0 && shape.width % 32 == 0) q8_bytes = std::max(q8_bytes, q8_activation_bytes(shape.width, shape.rows));
  }
  INFERSCOPE_RETURN_IF_ERROR(make(a.q8_b, static_cast<int64_t>(q8_bytes / 4)));
  INFERSCOPE_RETURN_IF_ERROR(make(a.q8_h, E % 32 == 0 ? static_cast<int64_t>(q8_activation_bytes(E, B) / 4) : 1));
  INFERSCOPE_RETURN_IF_ERROR(make(a.logits_host, p[Act::Logits].floats(), MemoryUse::Staging));
  // CPU drivers run one workgroup per core anyway: no split there.
  if (!device.info().is_cpu()) {
    AttentionParams split;
    split.n_head = c.n_head;
    split.n_head_kv = c.n_head_kv;
    split.head_dim = c.max_head_dim();
    INFERSCOPE_RETURN_IF_ERROR(make(a.attention_split, static_cast<int64_t>(attention_split_scratch_bytes(split) / 4)));
  }
  const auto table_entries = static_cast<int64_t>(block_table_capacity(plan));
  INFERSCOPE_RETURN_IF_ERROR(make(a.block_table, table_entries));
  if (!a.block_table->mapped()) INFERSCOPE_RETURN_IF_ERROR(make(a.block_table_staging, table_entries, MemoryUse::Staging));
  return buffers;
}

}  // namespace inferscope::vulkan
