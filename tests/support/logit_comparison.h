// Comparing two backends' logits over the same positions (the GPU backends' model tests), and
// naming parameterized cases after model files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace inferscope::testing {

// Over positions of n_vocab logits: the largest KL(a || b), the largest |a - b| relative to a's
// logit range, and how many positions' argmaxes differ.
struct LogitComparison {
  double max_kl = 0, max_rel_diff = 0;
  int top1_disagreements = 0;
};
LogitComparison compare_logits(const std::vector<float>& a, const std::vector<float>& b, int64_t n_vocab);

// "quant/q4_k_m.gguf" -> "q4_k_m": a file's stem with every other character than letters and
// digits turned into '_', for test names.
std::string case_name(const std::string& path);

}  // namespace inferscope::testing
