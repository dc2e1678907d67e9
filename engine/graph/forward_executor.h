// The forward pass of one model on one compute backend, with its own KV cache: what a Session
// drives. There is one implementation, ForwardPass (engine/graph/forward_pass.h), over the ops
// of a backend (engine/backend/backend_ops.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "engine/backend/backend_usage.h"
#include "engine/core/status.h"
#include "engine/metrics/op_profile.h"

namespace inferscope {

// The paged KV pool (engine/kv/block_pool.h) as the memory chart and `bench` show it.
struct KvBlockStats {
  int32_t block_size = 0;
  int32_t referenced = 0, cached = 0, free = 0;  // blocks
  int64_t positions_held = 0;       // rows of the slots' blocks holding a position
  int64_t positions_in_blocks = 0;  // rows of the slots' blocks (a shared block counted once)
  int64_t prefix_hits = 0, prefix_lookups = 0;  // cached blocks found / looked for
};

// One sequence of a batched forward call: `tokens` appended to `slot`, the logits of its last
// token written to `logits` ([n_vocab]).
struct SequenceTokens {
  int slot = 0;
  std::span<const int32_t> tokens;
  float* logits = nullptr;
};

class ForwardExecutor {
 public:
  virtual ~ForwardExecutor() = default;

  // Appends `tokens` to `slot` (positions continue from the slot's KV length) and writes the
  // logits of the last token, or of every token when `all_logits`, to `logits`
  // ([n_out][output_width()]). Fails when the context is full or a token id is invalid. An
  // encoder (ModelConfig::is_encoder) takes a whole sequence into an empty slot, all_logits.
  virtual Status forward(int slot, std::span<const int32_t> tokens, bool all_logits, float* logits) = 0;
  // A speculative verification: forward() with every token's logits, each row computed exactly
  // as a forward() of that token alone would compute it (the decode kernels, the same sums to
  // the last bit), so that greedy decoding with drafts reproduces greedy decoding without them.
  virtual Status verify(int slot, std::span<const int32_t> tokens, float* logits) = 0;
  // The same for several sequences at once (distinct slots): their tokens share each chunk, so
  // N decoding sequences read the weights once per step instead of N times.
  virtual Status forward_batch(std::span<const SequenceTokens> sequences) = 0;
  // A self-draft (speculative decoding): forward() with the last token's logits, through only
  // the model's first `n_layers` layers (1 .. n_layer), then its final norm and output head.
  // The positions it appends hold the KV rows of those layers only: until truncate() removes
  // them, a call through more layers fails (its queries would read rows never written), and
  // they are never offered to the prefix cache. Decoders without a KV window only.
  virtual Status forward_layers(int slot, std::span<const int32_t> tokens, int64_t n_layers, float* logits) = 0;
  // An MTP draft (speculative decoding; a pass made with ForwardOptions::mtp): `token` appended
  // to `slot` through the model's MTP block alone, and the block's logits for the token after
  // it. `first`: the slot's last position is the model's own (the draft's first token);
  // otherwise the previous draft_mtp's. The positions it appends hold the block's KV rows only:
  // truncate() back to where drafting started (which leaves the recurrent state as it is)
  // before any other call for the slot.
  virtual Status draft_mtp(int slot, int32_t token, bool first, float* logits) = 0;
  // Whether draft_mtp runs (ForwardOptions::mtp).
  virtual bool drafts_mtp() const = 0;
  // Context shift: drops the older half of `slot`'s blocks after its attention-sink blocks and
  // moves the later ones down (their keys re-rotated), so generation can go on in a full
  // context. Fails when there is nothing to drop.
  virtual Status shift_context(int slot) = 0;

  // Floats per output row: n_vocab (logits), or n_embd where the rows are token states (an
  // encoder, or ForwardOptions::hidden_states).
  virtual int64_t output_width() const = 0;
  virtual int64_t n_ctx() const = 0;
  virtual int n_slots() const = 0;
  virtual int64_t kv_length(int slot) const = 0;
  // Empties every slot.
  virtual void clear() = 0;
  // Empties every slot and evicts every cached prefix block: the next prompt starts cold.
  virtual void clear_with_prefixes() = 0;
  // Empties `slot`, then gives it the cached KV of the longest prefix of `tokens` in whole
  // blocks that a previous request left (always leaving at least one token to evaluate);
  // returns the positions it holds now. The caller forwards tokens from there.
  virtual int64_t reuse_prefix(int slot, std::span<const int32_t> tokens) = 0;
  // Keeps the first `length` positions of `slot` (0 <= length <= kv_length(slot)); the next
  // forward call continues from there.
  virtual void truncate(int slot, int64_t length) = 0;
  // After the call slot i holds what slot parents[i] held (beam search re-ranking).
  virtual Status reorder(std::span<const int32_t> parents) = 0;

  virtual ExecutorMemory memory() const = 0;
  virtual KvBlockStats kv_blocks() const = 0;
  virtual ExecutorCounters counters() const { return {}; }
  // Time per op kind (and per layer where the backend measures it), accumulated over calls.
  // GPU backends may time a sample of the calls (Vulkan: one decode step in eight), so
  // compare shares.
  virtual OpProfile& profile() = 0;
  // "cpu", or "vulkan: <device name>".
  virtual std::string backend_name() const = 0;
};

}  // namespace inferscope
