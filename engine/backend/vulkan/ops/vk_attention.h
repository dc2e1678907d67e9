// Attention of a batch of queries over the KV cache on the Vulkan device (shader
// attention.comp, tiled with an online softmax, one variant per pair of K and V types): the
// counterpart of the attention loop of CpuOps::attention (kernels::attention_group per GQA
// group: attention_head_f16's numerics for F16 K and V, the fused F32 path for any other pair).
// Operands may start at any multiple of 4 bytes of their buffers (vk_op_util.h: bind_words).
#pragma once

#include <cstdint>

#include "engine/backend/vulkan/ops/vk_kv.h"
#include "engine/backend/vulkan/vk_buffer.h"
#include "engine/backend/vulkan/vk_device.h"
#include "engine/backend/vulkan/vk_recorder.h"
#include "engine/core/status.h"

namespace inferscope::vulkan {

struct AttentionParams {
  int64_t n_head = 0;
  int64_t n_head_kv = 0;  // divides n_head (GQA: query head h reads KV head h / (n_head / n_head_kv))
  int64_t head_dim = 0;   // even, <= 1024; n_head_kv * head_dim == the layout's values()
  float scale = 1.0f;     // score scale (1/sqrt(head_dim) unless the model says otherwise)
  float softcap = 0.0f;   // > 0: scores become softcap * tanh(score / softcap) (Gemma 2)
  int64_t n_swa = 0;      // > 0: sliding window, a token sees itself and the n_swa - 1 before it
  // Splits of each token's KV range, run as separate workgroups and combined by a second
  // dispatch (flash decoding). 0: record_attention chooses (more than 1 only when heads x
  // tokens are too few workgroups for the device, the range is long and a scratch span is
  // given); > 0 forces the count (tests), and needs the scratch when > 1.
  int64_t n_split = 0;
  // Queries per workgroup, which share each K/V row read: heads_per_group query heads of one
  // KV head (dividing n_head / n_head_kv) times tokens_per_group consecutive tokens. 0 lets
  // record_attention choose: the largest power of two <= 8 dividing the GQA group, then for a
  // batch of 8 or more tokens that is not split as many tokens as make 8 queries, as the
  // shared memory allows; > 0 forces it (tests; tokens_per_group 1 with n_split > 1).
  int64_t heads_per_group = 0;
  int64_t tokens_per_group = 0;
  // With a window (n_swa > 0): the first n_sinks positions stay visible to every token
  // (StreamingLLM's attention sinks; AttentionShape::sinks). Ignored without a window.
  int64_t n_sinks = 0;
  // false (encoders, no window): every token sees all positions up to pos0 + n_tokens - 1.
  bool causal = true;
  // gpt-oss's learned sinks: [n_head] F32 logits, one more term exp(sink[h] - max) in each head's
  // softmax sum (AttentionShape::sink_logits); no buffer: none.
  BufferSpan sink_logits;
};

// Bytes of the scratch span that record_attention needs to split the KV range when it chooses
// to (n_split = 0); with a forced n_split: n_tokens * n_head * n_split * (head_dim + 2) * 4.
uint64_t attention_split_scratch_bytes(const AttentionParams& params);

// out[t][h] = softmax(cap(scale * q[t][h] . K^T)) . V for t < n_tokens, h < n_head, over the
// positions j <= pos0 + t of `layer` in the caches that the window leaves visible (j > pos0 + t -
// n_swa, or j < n_sinks; all j without a window), read through the sequence's block `table`.
// q, out: [n_tokens][n_head * head_dim] F32. One dispatch, or two when
// the KV range is split (see AttentionParams::n_split; split_scratch: attention_split_scratch_bytes
// bytes the op may overwrite, or BufferSpan{} to never split). With a q8 span, out is also
// written there quantized for the int8 matvec (vk_quantize.h): by the attention dispatch itself
// when it does not split, head_dim % 32 == 0 and K and V are F16, else by one more
// (record_quantize_q8); then n_head * head_dim % 32 == 0.
// Preconditions: those cache rows are written (record_kv_store earlier in the recording);
// checked: the table covers pos0 + n_tokens positions with blocks of the pool.
Status record_attention(Device& device, Recorder& recorder, BufferSpan q, BufferSpan k_cache, BufferSpan v_cache,
                        const KvCacheLayout& layout, int64_t layer, const KvBlockTable& table, BufferSpan out,
                        const AttentionParams& params, int64_t n_tokens, int64_t pos0, DispatchLabel label = {},
                        BufferSpan split_scratch = {}, BufferSpan q8 = {});

}  // namespace inferscope::vulkan
