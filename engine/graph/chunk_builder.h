// How a forward call becomes chunks: up to max_batch rows at a time, taken from its sequences
// in order, with each finishing sequence's last token among the chunk's last rows (the rows
// whose logits the backend returns), after the KV slots made room for them (the window's
// eviction, new blocks, copies of shared blocks). Several sequences share a chunk, so N
// decoding sequences read the weights once per step instead of N times.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/backend/backend_ops.h"
#include "engine/core/status.h"
#include "engine/graph/kv_slots.h"

namespace inferscope {

// A sequence of a forward call: its tokens, how many are done, and how many the chunk being
// built takes.
struct PendingSequence {
  int slot = 0;
  std::span<const int32_t> tokens;
  float* logits = nullptr;  // its last token's; null when the call wants every token's
  size_t done = 0;
  int64_t take = 0;

  bool unfinished() const { return done < tokens.size(); }
};

// How a forward call's chunks run: through the first n_layers layers, batch-invariant or not,
// or the MTP block alone, keeping row states or not (Chunk::n_layers, batch_invariant,
// mtp_draft, keep_row_states).
struct CallShape {
  int64_t n_layers = 0;
  bool batch_invariant = false;
  MtpDraft mtp_draft = MtpDraft::None;
  bool keep_row_states = false;
};

class ChunkBuilder {
 public:
  // `slots` must outlive the builder.
  ChunkBuilder(KvSlots& slots, int64_t max_batch, int64_t n_ctx, int64_t output_width)
      : slots_(slots), max_batch_(max_batch), n_ctx_(n_ctx), output_width_(output_width) {}

  // The next chunk of `pending` (some sequence unfinished). With all_logits (one sequence),
  // every row's logits go there, from the sequence's first row not done. The chunk's spans and
  // logits point into the builder until the next call.
  Result<Chunk> next(std::span<PendingSequence> pending, float* all_logits, CallShape shape);
  // The chunk's token ids, row by row.
  std::span<const int32_t> tokens() const { return tokens_; }
  // After the chunk ran: the logits of several finishing sequences go to theirs, and every
  // sequence's rows are committed to its slot.
  void finish(std::span<PendingSequence> pending, int64_t n_layers);

 private:
  Status take_rows(std::span<PendingSequence> pending);
  std::span<const BlockId> window_blocks(int slot) const;

  KvSlots& slots_;
  const int64_t max_batch_, n_ctx_, output_width_;
  std::vector<int32_t> tokens_;
  std::vector<ChunkSpan> spans_;
  std::vector<float*> destinations_;  // the finishing sequences' logits, in the chunk's last rows
  std::vector<float> logits_;         // several finishing sequences' logits before they go to each
};

}  // namespace inferscope
