// Quality of a candidate configuration against a baseline, from their logits on the same tokens
// (teacher-forced: both evaluate the baseline's tokens). In double precision, natural log:
//
//   p = softmax(baseline logits), q = softmax(candidate logits)      (one position)
//   KL(p || q)  = sum_i p_i (log p_i - log q_i)                        >= 0, 0 iff p == q
//   top-1 agrees = argmax p == argmax q                               (ties: the lowest id)
//   NLL         = -log q_target, target = the next token of the text
//   perplexity  = exp(mean NLL over the scored positions)
//
// A configuration against itself gives KL exactly 0 and top-1 100%: identical logits make every
// term log p_i - log q_i exactly 0.
#pragma once

#include <cstdint>
#include <vector>

namespace inferscope {

// One position. base, cand: [n_vocab] logits; target: the token that followed (its NLL under q).
struct PositionQuality {
  double kl = 0;
  bool top1_agrees = true;
  double nll = 0;
};
PositionQuality compare_position(const float* base, const float* cand, int64_t n_vocab, int32_t target);

// Where the largest per-position KL happened.
struct WorstPosition {
  int32_t sequence = -1;  // index of the evaluated sequence (a prompt, or the quality text)
  int64_t position = -1;  // token index in that sequence whose next-token distribution differed
  int32_t target = -1;    // the token that followed there
  double kl = 0;
};

struct QualityFigures {
  int64_t positions = 0;
  double mean_kl = 0;
  double top1_agreement = 1;  // fraction of positions
  double max_kl = 0;
  WorstPosition worst;
  double perplexity = 0;      // of the candidate over the perplexity positions (0 when none)
  int64_t perplexity_positions = 0;
  std::vector<float> kl_per_position;  // in the order the positions were added
};

// Sums positions as they are compared.
class QualityAccumulator {
 public:
  // counts_for_perplexity: whether this position's NLL enters the perplexity.
  void add(const PositionQuality& q, int32_t sequence, int64_t position, int32_t target, bool counts_for_perplexity);
  QualityFigures figures() const;

 private:
  QualityFigures f_;
  double kl_sum_ = 0;
  int64_t top1_ = 0;
  double nll_sum_ = 0;
};

}  // namespace inferscope
