#include "tests/support/distributions.h"

#include <algorithm>
#include <cmath>

namespace inferscope::testing {

std::vector<double> log_softmax(const float* logits, int64_t n) {
  double max = logits[0];
  for (int64_t i = 1; i < n; ++i) max = std::max<double>(max, logits[i]);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(logits[i] - max);
  const double log_sum = std::log(sum);
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = logits[i] - max - log_sum;
  return out;
}

double kl_divergence(const float* p_logits, const float* q_logits, int64_t n) {
  const std::vector<double> p = log_softmax(p_logits, n);
  const std::vector<double> q = log_softmax(q_logits, n);
  double kl = 0.0;
  for (size_t i = 0; i < p.size(); ++i) kl += std::exp(p[i]) * (p[i] - q[i]);
  return kl;
}

}  // namespace inferscope::testing
