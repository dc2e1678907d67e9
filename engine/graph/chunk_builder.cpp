#include "engine/graph/chunk_builder.h"

#include <algorithm>

namespace inferscope {

namespace {

bool finishing(const PendingSequence& p) { return p.logits && p.done + static_cast<size_t>(p.take) == p.tokens.size(); }

}  // namespace

// How many rows each sequence takes, in order, until the chunk is full; room made for them.
Status ChunkBuilder::take_rows(std::span<PendingSequence> pending) {
  int64_t room = max_batch_;
  for (PendingSequence& p : pending) {
    p.take = 0;
    const int64_t left = static_cast<int64_t>(p.tokens.size() - p.done);
    if (left == 0 || room == 0) continue;
    int64_t n = std::min(left, room);
    if (slots_.window() > 0) {
      INFERSCOPE_RETURN_IF_ERROR(slots_.slide_window(p.slot, n));
      n = std::min(n, n_ctx_ - slots_.length(p.slot));
      if (n < 1) return Status::error("internal: the KV window left no room in the context");
    }
    p.take = n;
    room -= n;
  }
  for (const PendingSequence& p : pending) {
    if (p.take > 0) INFERSCOPE_RETURN_IF_ERROR(slots_.make_writable(p.slot, p.take));
  }
  return Status::ok();
}

std::span<const BlockId> ChunkBuilder::window_blocks(int slot) const {
  const BlockTable* window = slots_.window_table(slot);
  return window ? window->blocks() : std::span<const BlockId>();
}

Result<Chunk> ChunkBuilder::next(std::span<PendingSequence> pending, float* all_logits, CallShape shape) {
  INFERSCOPE_RETURN_IF_ERROR(take_rows(pending));
  spans_.clear();
  tokens_.clear();
  destinations_.clear();
  for (const PendingSequence& p : pending) {
    const int64_t body = p.take - (finishing(p) ? 1 : 0);
    if (p.take == 0 || body == 0) continue;
    const BlockTable& t = slots_.table(p.slot);
    spans_.push_back({p.slot, t.length(), body, t.blocks(), window_blocks(p.slot)});
    const auto from = p.tokens.begin() + static_cast<std::ptrdiff_t>(p.done);
    tokens_.insert(tokens_.end(), from, from + body);
  }
  for (const PendingSequence& p : pending) {
    if (p.take == 0 || !finishing(p)) continue;
    const BlockTable& t = slots_.table(p.slot);
    spans_.push_back({p.slot, t.length() + p.take - 1, 1, t.blocks(), window_blocks(p.slot)});
    tokens_.push_back(p.tokens[p.done + static_cast<size_t>(p.take) - 1]);
    destinations_.push_back(p.logits);
  }
  Chunk chunk{spans_, static_cast<int64_t>(tokens_.size()), static_cast<int64_t>(destinations_.size()), nullptr,
              shape.n_layers, shape.batch_invariant, shape.mtp_draft, shape.keep_row_states};
  if (all_logits) {
    chunk.n_logits = chunk.n;
    chunk.logits = all_logits + static_cast<int64_t>(pending[0].done) * output_width_;
  } else if (destinations_.size() == 1) {
    chunk.logits = destinations_[0];
  } else if (!destinations_.empty()) {
    logits_.resize(destinations_.size() * static_cast<size_t>(output_width_));
    chunk.logits = logits_.data();
  }
  return chunk;
}

void ChunkBuilder::finish(std::span<PendingSequence> pending, int64_t n_layers) {
  if (destinations_.size() > 1) {
    for (size_t i = 0; i < destinations_.size(); ++i) {
      std::copy_n(logits_.data() + i * static_cast<size_t>(output_width_), output_width_, destinations_[i]);
    }
  }
  for (PendingSequence& p : pending) {
    if (p.take == 0) continue;
    slots_.commit(p.slot, p.tokens.subspan(p.done, static_cast<size_t>(p.take)), n_layers);
    p.done += static_cast<size_t>(p.take);
  }
}

}  // namespace inferscope
