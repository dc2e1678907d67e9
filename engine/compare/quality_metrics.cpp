#include "engine/compare/quality_metrics.h"

#include <algorithm>
#include <cmath>

namespace inferscope {
namespace {

int64_t argmax(const float* x, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (x[i] > x[best]) best = i;
  }
  return best;
}

// log(sum_i exp(x_i)) computed around the maximum.
double log_sum_exp(const float* x, int64_t n, double max) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(x[i]) - max);
  return max + std::log(sum);
}

}  // namespace

PositionQuality compare_position(const float* base, const float* cand, int64_t n_vocab, int32_t target) {
  const int64_t top_p = argmax(base, n_vocab);
  const int64_t top_q = argmax(cand, n_vocab);
  const double lse_p = log_sum_exp(base, n_vocab, base[top_p]);
  const double lse_q = log_sum_exp(cand, n_vocab, cand[top_q]);
  double kl = 0;
  for (int64_t i = 0; i < n_vocab; ++i) {
    const double log_p = static_cast<double>(base[i]) - lse_p;
    const double log_q = static_cast<double>(cand[i]) - lse_q;
    kl += std::exp(log_p) * (log_p - log_q);
  }
  PositionQuality q;
  q.kl = std::max(0.0, kl);  // rounding can leave a tiny negative sum for near-equal distributions
  q.top1_agrees = top_p == top_q;
  q.nll = target >= 0 && target < n_vocab ? lse_q - static_cast<double>(cand[target]) : 0.0;
  return q;
}

void QualityAccumulator::add(const PositionQuality& q, int32_t sequence, int64_t position, int32_t target,
                             bool counts_for_perplexity) {
  ++f_.positions;
  kl_sum_ += q.kl;
  top1_ += q.top1_agrees ? 1 : 0;
  f_.kl_per_position.push_back(static_cast<float>(q.kl));
  if (f_.worst.sequence < 0 || q.kl > f_.worst.kl) f_.worst = {sequence, position, target, q.kl};
  if (counts_for_perplexity) {
    nll_sum_ += q.nll;
    ++f_.perplexity_positions;
  }
}

QualityFigures QualityAccumulator::figures() const {
  QualityFigures f = f_;
  if (f.positions > 0) {
    f.mean_kl = kl_sum_ / static_cast<double>(f.positions);
    f.top1_agreement = static_cast<double>(top1_) / static_cast<double>(f.positions);
    f.max_kl = f.worst.kl;
  }
  if (f.perplexity_positions > 0) f.perplexity = std::exp(nll_sum_ / static_cast<double>(f.perplexity_positions));
  return f;
}

}  // namespace inferscope
