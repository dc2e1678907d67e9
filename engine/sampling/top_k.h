// Ranking tokens by logit: the one tie-breaking order, top-k selection without sorting the whole
// vocabulary, and argmax; shared by the sampler, top_logprobs and beam search so they agree.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/sampling/logit_math.h"

namespace inferscope {

struct TokenLogit {
  TokenLogit() {}  // NOLINT: left uninitialised so scratch buffers resize without a fill
  TokenLogit(int32_t id_, float logit_) : id(id_), logit(logit_) {}
  int32_t id;
  float logit;
};

// Higher logit first, ties -> lower id. A total order, so results never depend on how the
// standard library's partial sorts break ties.
inline bool ranks_before(const TokenLogit& a, const TokenLogit& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// Writes the min(k, size) best tokens of `logits` (index = token id, sanitized) into `out`,
// sorted by ranks_before. Reuses out's capacity: allocation-free once out.capacity() >= size.
void select_top_k(std::span<const float> logits, int32_t k, std::vector<TokenLogit>& out);

// Writes every token whose sanitized logit is >= threshold into `out`, in id order. Skips
// blocks below the threshold with vector compares, so a high threshold (min-p) costs about one
// read of the logits. Reuses out's capacity like select_top_k.
void select_at_least(std::span<const float> logits, float threshold, std::vector<TokenLogit>& out);

// Index of the largest sanitized logit, ties -> lowest id; 0 when all are masked or empty.
int32_t argmax_logit(std::span<const float> logits);

}  // namespace inferscope
