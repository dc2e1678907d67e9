#include "engine/backend/vulkan/ops/vk_attention.h"

#include <algorithm>
#include <string>

#include "engine/backend/vulkan/ops/vk_op_util.h"
#include "engine/backend/vulkan/ops/vk_quantize.h"

namespace inferscope::vulkan {

namespace {

struct AttentionPush {
  uint32_t n_tokens;
  uint32_t n_head;
  uint32_t n_head_kv;
  uint32_t pos0;
  uint32_t n_swa;
  uint32_t k_byte0, v_byte0;
  uint32_t k_row_bytes, v_row_bytes;
  float scale;
  float softcap;
  uint32_t q_off, out_off;
  uint32_t n_split;
  uint32_t split_len;
  uint32_t partial_off;
  uint32_t block_shift;
  uint32_t table_off;
  uint32_t n_sinks;
  uint32_t causal;
  uint32_t has_sink_logits;
  uint32_t sink_logits_off;
};

struct ReducePush {
  uint32_t n_tokens;
  uint32_t n_head;
  uint32_t n_split;
  uint32_t partial_off;
  uint32_t out_off;
  uint32_t has_sink_logits;
  uint32_t sink_logits_off;
};

constexpr int64_t kMaxHeadDim = 1024;
constexpr uint32_t kMaxQueries = 8;  // queries per workgroup (heads x tokens) record_attention picks
constexpr uint32_t kMaxTile = 32;
// Automatic splitting: up to kMaxSplits splits of at least kMinSplitPositions positions each,
// until heads x tokens x splits reaches kSplitTargetWorkgroups (a few per compute unit of a
// large GPU). CPU devices (lavapipe) gain nothing from it.
constexpr int64_t kSplitTargetWorkgroups = 256;
constexpr int64_t kMaxSplits = 32;
constexpr int64_t kMinSplitPositions = 128;

int64_t auto_splits(const Device& device, const AttentionParams& p, int64_t heads_per_group, int64_t n_tokens,
                    int64_t longest_range) {
  const int64_t groups = p.n_head / heads_per_group * n_tokens;
  if (groups >= kSplitTargetWorkgroups || device.info().is_cpu()) return 1;
  const int64_t by_groups = (kSplitTargetWorkgroups + groups - 1) / groups;
  const int64_t by_length = longest_range / kMinSplitPositions;
  return std::max<int64_t>(1, std::min({kMaxSplits, by_groups, by_length}));
}

// Query heads per workgroup: the largest power of two <= kMaxQueries dividing the GQA group.
uint32_t auto_heads_per_group(const AttentionParams& p) {
  const int64_t group = p.n_head / p.n_head_kv;
  uint32_t hg = 1;
  while (hg * 2 <= kMaxQueries && group % (hg * 2) == 0) hg *= 2;
  return hg;
}

// The attention.comp variant for the cache's types: "attention" (F16 K and V, also with the
// fused q8 output) or attention_<k>_<v>.
std::string kernel_name(const KvTypes& types) {
  if (types == KvTypes{}) return "attention";
  return "attention_" + std::string(kernels::kv_type_name(types.k)) + "_" + std::string(kernels::kv_type_name(types.v));
}

uint32_t ceil_pow2(uint64_t v) {
  uint32_t p = 1;
  while (p < v && p < (1u << 31)) p *= 2;
  return p;
}


// attention.comp's shared memory: per query of the workgroup, q and the accumulator (head_dim
// floats each), the partial dot products (one float per invocation), the tile's scores and
// weights; and the tile's pool rows.
uint64_t shared_bytes(uint32_t head_dim, uint32_t wg, uint32_t tile, uint32_t queries) {
  return queries * (2ull * head_dim * sizeof(float) + wg * sizeof(float) + 2ull * tile * sizeof(float)) +
         tile * sizeof(uint32_t);
}

}  // namespace

uint64_t attention_split_scratch_bytes(const AttentionParams& p) {
  // n_tokens * n_head * splits < 2 * kSplitTargetWorkgroups whenever auto_splits splits.
  return 2ull * kSplitTargetWorkgroups * static_cast<uint64_t>(p.head_dim + 2) * sizeof(float);
}

Status record_attention(Device& device, Recorder& recorder, BufferSpan q, BufferSpan k_cache, BufferSpan v_cache,
                        const KvCacheLayout& layout, int64_t layer, const KvBlockTable& table, BufferSpan out,
                        const AttentionParams& p, int64_t n_tokens, int64_t pos0, DispatchLabel label,
                        BufferSpan split_scratch, BufferSpan q8) {
  constexpr const char* kOp = "attention";
  if (!p.causal && p.n_swa > 0) return Status::error("attention: a sliding window needs causal attention");
  if (n_tokens < 0 || pos0 < 0 || p.n_swa < 0 || p.n_split < 0 || p.n_sinks < 0) {
    return Status::error("attention: negative size or position");
  }
  if (p.n_head <= 0 || p.n_head_kv <= 0 || p.n_head % p.n_head_kv != 0) {
    return Status::error("attention: n_head (" + std::to_string(p.n_head) + ") must be a positive multiple of n_head_kv (" +
                         std::to_string(p.n_head_kv) + ")");
  }
  if (p.head_dim <= 0 || p.head_dim % 2 != 0 || p.head_dim > kMaxHeadDim) {
    return Status::error("attention: head_dim = " + std::to_string(p.head_dim) + " must be even and at most " +
                         std::to_string(kMaxHeadDim));
  }
  if (p.n_head_kv * p.head_dim != layout.values() || layout.values() > layout.kv.n_embd_kv) {
    return Status::error("attention: n_head_kv * head_dim = " + std::to_string(p.n_head_kv * p.head_dim) +
                         " differs from the layer's " + std::to_string(layout.values()) + " values of rows of " +
                         std::to_string(layout.kv.n_embd_kv));
  }
  INFERSCOPE_RETURN_IF_ERROR(check_block_table(layout, table, pos0 + n_tokens, kOp));
  INFERSCOPE_RETURN_IF_ERROR(check_u32(pos0 + n_tokens, kOp, "positions"));
  if (p.n_head > device.info().max_workgroup_count[0]) return Status::error("attention: too many heads for one dispatch");
  for (const KvPart part : {KvPart::K, KvPart::V}) {
    const kernels::KvType type = layout.type(part);
    INFERSCOPE_RETURN_IF_ERROR(check_kv_type(type));
    if (layout.values() % kernels::kv_row_granule(type) != 0) {
      return Status::error("attention: rows of " + std::string(kernels::kv_type_name(type)) +
                           " need a multiple of " + std::to_string(kernels::kv_row_granule(type)) + " values");
    }
  }
  auto kb = kv_layer_binding(device, k_cache, layout, KvPart::K, layer, kOp, "k_cache");
  if (!kb) return kb.status();
  auto vb = kv_layer_binding(device, v_cache, layout, KvPart::V, layer, kOp, "v_cache");
  if (!vb) return vb.status();
  if (n_tokens == 0) return Status::ok();
  INFERSCOPE_BIND_WORDS(tb, device, table.device, table.ids.size(), kOp, "block table");
  const int64_t floats = n_tokens * p.n_head * p.head_dim;
  INFERSCOPE_RETURN_IF_ERROR(check_u32(floats, kOp, "q size"));
  INFERSCOPE_BIND_WORDS(qb, device, q, static_cast<uint64_t>(floats), kOp, "q");
  INFERSCOPE_BIND_WORDS(ob, device, out, static_cast<uint64_t>(floats), kOp, "out");
  // Without learned sinks the binding is q's (the shaders do not read it).
  BoundSpan sink_logits{qb.span, 0};
  if (p.sink_logits.buffer) {
    auto b = bind_words(device, p.sink_logits, static_cast<uint64_t>(p.n_head), kOp, "sink logits");
    if (!b) return b.status();
    sink_logits = *b;
  }

  // About one invocation per pair of head dimensions (the accumulator update), so that few
  // sit idle; the tile gives each score WORKGROUP_SIZE / TILE invocations.
  const uint32_t head_dim = static_cast<uint32_t>(p.head_dim);
  uint32_t wg = op_workgroup_size(device, std::clamp<uint32_t>(ceil_pow2(head_dim / 2), 32, 256));
  uint32_t tile = std::min(wg, kMaxTile);
  while (shared_bytes(head_dim, wg, tile, 1) > device.info().max_shared_memory && wg > 8) {
    wg /= 2;
    tile = std::min(wg, kMaxTile);
  }
  if (shared_bytes(head_dim, wg, tile, 1) > device.info().max_shared_memory) {
    return Status::error("attention: head_dim " + std::to_string(head_dim) + " needs more shared memory than the device has");
  }

  uint32_t heads = p.heads_per_group > 0 ? static_cast<uint32_t>(p.heads_per_group) : auto_heads_per_group(p);
  if ((p.n_head / p.n_head_kv) % heads != 0) {
    return Status::error("attention: heads_per_group must divide n_head / n_head_kv");
  }
  while (heads > 1 && shared_bytes(head_dim, wg, tile, heads) > device.info().max_shared_memory) heads /= 2;

  // The longest KV range of the batch is the last token's: its window, and the sinks before it.
  const int64_t last_pos = pos0 + n_tokens - 1;
  const int64_t window_first = p.n_swa > 0 ? std::max<int64_t>(0, last_pos - p.n_swa + 1) : 0;
  const int64_t n_sinks = p.n_swa > 0 ? std::min(p.n_sinks, window_first) : 0;
  const int64_t longest = last_pos - window_first + 1 + n_sinks;
  int64_t n_split = p.n_split > 0 ? p.n_split
                                  : (split_scratch.buffer ? auto_splits(device, p, heads, n_tokens, longest) : 1);
  n_split = std::min<int64_t>(n_split, (longest + tile - 1) / tile);  // no split without a tile
  n_split = std::min<int64_t>(n_split, device.info().max_workgroup_count[2]);
  // Positions per split, whole tiles, so that n_split of them cover the longest range.
  const int64_t per_split = (longest + n_split - 1) / n_split;
  const int64_t split_len = (per_split + tile - 1) / tile * tile;
  // Tokens per workgroup: several for a batch that is not split, as the shared memory allows.
  uint32_t tokens = p.tokens_per_group > 0
                        ? static_cast<uint32_t>(p.tokens_per_group)
                        : (n_split == 1 && n_tokens >= kMaxQueries ? std::max(1u, kMaxQueries / heads) : 1u);
  if (n_split > 1 && tokens != 1) return Status::error("attention: a split KV range takes one token per workgroup");
  while (tokens > 1 && shared_bytes(head_dim, wg, tile, tokens * heads) > device.info().max_shared_memory) tokens /= 2;
  const uint32_t spec[] = {wg, head_dim, tile, tokens, heads};
  const uint32_t gx = static_cast<uint32_t>(p.n_head / heads);
  BoundSpan partial{qb.span, 0};
  if (n_split > 1) {
    const uint64_t words = static_cast<uint64_t>(n_tokens * p.n_head * n_split) * (head_dim + 2);
    auto b = bind_words(device, split_scratch, words, kOp, "split scratch");
    if (!b) return b.status();
    partial = *b;
  }

  AttentionPush push{};
  push.n_tokens = static_cast<uint32_t>(n_tokens);
  push.n_head = static_cast<uint32_t>(p.n_head);
  push.n_head_kv = static_cast<uint32_t>(p.n_head_kv);
  push.pos0 = static_cast<uint32_t>(pos0);
  push.n_swa = static_cast<uint32_t>(std::min<int64_t>(p.n_swa, pos0 + n_tokens));  // longer: no window
  push.k_byte0 = kb->byte0;
  push.v_byte0 = vb->byte0;
  push.k_row_bytes = static_cast<uint32_t>(layout.row_bytes(KvPart::K));
  push.v_row_bytes = static_cast<uint32_t>(layout.row_bytes(KvPart::V));
  push.scale = p.scale;
  push.softcap = p.softcap;
  push.q_off = qb.first;
  push.out_off = ob.first;
  push.n_split = static_cast<uint32_t>(n_split);
  push.split_len = static_cast<uint32_t>(split_len);
  push.partial_off = partial.first;
  push.block_shift = layout.block_shift();
  push.table_off = tb.first;
  push.n_sinks = static_cast<uint32_t>(n_sinks);
  push.causal = p.causal ? 1u : 0u;
  push.has_sink_logits = p.sink_logits.buffer ? 1u : 0u;
  push.sink_logits_off = sink_logits.first;
  const int64_t token_groups = (n_tokens + tokens - 1) / tokens;
  const uint32_t gy = static_cast<uint32_t>(std::min<int64_t>(token_groups, device.info().max_workgroup_count[1]));
  const int64_t row = p.n_head * p.head_dim;
  if (q8.buffer && row % 32 != 0) {
    return Status::error("attention: quantized output needs rows of a multiple of 32 values");
  }
  const uint64_t q8_bytes = q8.buffer ? q8_activation_bytes(row, n_tokens) : 0;
  if (q8.buffer) INFERSCOPE_RETURN_IF_ERROR(check_span(device, q8, q8_bytes, kOp, "q8"));
  const bool fused_q8 = q8.buffer && n_split == 1 && p.head_dim % 32 == 0 && layout.kv.types == KvTypes{};
  if (fused_q8) {
    auto kernel = device.kernel(int8_native_variant(device) ? "attention_q8_native" : "attention_q8", 8, spec);
    if (!kernel) return kernel.status();
    recorder.dispatch(
        **kernel,
        {qb.span, kb->span, vb->span, ob.span, partial.span, tb.span, sink_logits.span, first_bytes(q8, q8_bytes)}, push,
        gx, gy, 1, label);
    return Status::ok();
  }
  auto kernel = device.kernel(kernel_name(layout.kv.types), 7, spec);
  if (!kernel) return kernel.status();
  recorder.dispatch(**kernel, {qb.span, kb->span, vb->span, ob.span, partial.span, tb.span, sink_logits.span}, push, gx, gy,
                    static_cast<uint32_t>(n_split), label);
  if (n_split == 1) {
    return q8.buffer ? record_quantize_q8(device, recorder, out, n_tokens, row, q8, label) : Status::ok();
  }

  const uint32_t reduce_wg = op_workgroup_size(device, std::clamp<uint32_t>(ceil_pow2(head_dim), 32, 256));
  const uint32_t reduce_spec[] = {reduce_wg, head_dim};
  auto reduce = device.kernel("attention_reduce", 3, reduce_spec);
  if (!reduce) return reduce.status();
  const ReducePush rp{static_cast<uint32_t>(n_tokens), static_cast<uint32_t>(p.n_head), static_cast<uint32_t>(n_split),
                      partial.first, ob.first, push.has_sink_logits, push.sink_logits_off};
  recorder.dispatch(**reduce, {partial.span, ob.span, sink_logits.span}, rp, static_cast<uint32_t>(p.n_head), gy, 1, label);
  return q8.buffer ? record_quantize_q8(device, recorder, out, n_tokens, row, q8, label) : Status::ok();
}

}  // namespace inferscope::vulkan
