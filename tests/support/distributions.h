// Double-precision softmax arithmetic on logits, for tests that compare distributions.
#pragma once

#include <cstdint>
#include <vector>

namespace inferscope::testing {

// log(softmax(logits)) over n values, computed in double.
std::vector<double> log_softmax(const float* logits, int64_t n);

// KL(softmax(p_logits) || softmax(q_logits)) over n values, in nats.
double kl_divergence(const float* p_logits, const float* q_logits, int64_t n);

}  // namespace inferscope::testing
