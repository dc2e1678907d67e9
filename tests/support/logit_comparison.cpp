#include "tests/support/logit_comparison.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "tests/support/distributions.h"

namespace inferscope::testing {

LogitComparison compare_logits(const std::vector<float>& a_all, const std::vector<float>& b_all, int64_t n_vocab) {
  LogitComparison c;
  EXPECT_EQ(a_all.size(), b_all.size());
  const auto width = static_cast<size_t>(n_vocab);
  for (size_t p = 0; (p + 1) * width <= std::min(a_all.size(), b_all.size()); ++p) {
    const float* a = a_all.data() + p * width;
    const float* b = b_all.data() + p * width;
    c.max_kl = std::max(c.max_kl, kl_divergence(a, b, n_vocab));
    float lo = a[0], hi = a[0];
    double diff = 0;
    int64_t arg_a = 0, arg_b = 0;
    for (int64_t i = 0; i < n_vocab; ++i) {
      lo = std::min(lo, a[i]);
      hi = std::max(hi, a[i]);
      diff = std::max(diff, static_cast<double>(std::fabs(a[i] - b[i])));
      if (a[i] > a[arg_a]) arg_a = i;
      if (b[i] > b[arg_b]) arg_b = i;
    }
    c.max_rel_diff = std::max(c.max_rel_diff, diff / std::max(1e-6f, hi - lo));
    if (arg_a != arg_b) ++c.top1_disagreements;
  }
  return c;
}

std::string case_name(const std::string& path) {
  std::string out;
  for (char ch : path.substr(path.rfind('/') + 1)) {
    if (ch == '.') break;
    out += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  }
  return out;
}

}  // namespace inferscope::testing
