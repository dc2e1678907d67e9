#include "tests/support/mtp_backend_check.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <deque>
#include <string>
#include <vector>

#include "tests/support/logit_comparison.h"

namespace inferscope::testing {

namespace {

struct Step {
  std::string name;
  std::vector<float> logits;
};

std::deque<Step> run_script(ForwardExecutor& fp, int64_t V) {
  std::deque<Step> steps;
  auto step = [&](const std::string& name, int64_t rows) -> float* {
    steps.push_back({name, std::vector<float>(static_cast<size_t>(rows * V))});
    return steps.back().logits.data();
  };
  auto check = [](const Status& st) { EXPECT_TRUE(st) << st.message(); };
  std::vector<int32_t> prompt = {1};
  for (int i = 1; i < 21; ++i) prompt.push_back(static_cast<int32_t>((29 * i + 5) % 400 + 2));
  check(fp.forward(0, prompt, false, step("prompt", 1)));
  // Two drafts, given back; a verification of three rows keeping two (a row state restored).
  int64_t before = fp.kv_length(0);
  check(fp.draft_mtp(0, 61, true, step("draft 1", 1)));
  check(fp.draft_mtp(0, 17, false, step("draft 2", 1)));
  fp.truncate(0, before);
  const int32_t three[] = {61, 40, 90};
  check(fp.verify(0, three, step("verify 3", 3)));
  fp.truncate(0, before + 2);
  check(fp.draft_mtp(0, 33, true, step("draft after 2 kept", 1)));
  fp.truncate(0, before + 2);
  // A verification of six rows keeping five: past the row states, the last row replayed.
  before = fp.kv_length(0);
  const int32_t six[] = {33, 20, 21, 22, 23, 24};
  check(fp.verify(0, six, step("verify 6", 6)));
  fp.truncate(0, before + 5);
  check(fp.draft_mtp(0, 71, true, step("draft after 5 kept", 1)));
  fp.truncate(0, before + 5);
  const int32_t next = 71;
  check(fp.forward(0, std::span(&next, 1), false, step("decode", 1)));
  // Slot 1: its own prompt and carried row, drafting beside slot 0's.
  const int32_t other[] = {1, 250, 251, 252, 253};
  check(fp.forward(1, other, false, step("slot 1 prompt", 1)));
  check(fp.draft_mtp(1, 9, true, step("slot 1 draft", 1)));
  check(fp.draft_mtp(0, 12, true, step("slot 0 draft", 1)));
  return steps;
}

}  // namespace

void expect_mtp_matches_cpu(ForwardExecutor& cpu, ForwardExecutor& gpu, int64_t n_vocab, double max_kl,
                            double max_rel_diff) {
  ASSERT_TRUE(cpu.drafts_mtp() && gpu.drafts_mtp());
  const std::deque<Step> expected = run_script(cpu, n_vocab);
  const std::deque<Step> got = run_script(gpu, n_vocab);
  ASSERT_EQ(expected.size(), got.size());
  EXPECT_EQ(gpu.counters().forward_calls, cpu.counters().forward_calls);
  for (size_t i = 0; i < expected.size(); ++i) {
    const LogitComparison c = compare_logits(expected[i].logits, got[i].logits, n_vocab);
    std::printf("%-20s KL max %.3g, max |diff| / range %.3g, top-1 disagreements %d\n", expected[i].name.c_str(),
                c.max_kl, c.max_rel_diff, c.top1_disagreements);
    EXPECT_LT(c.max_kl, max_kl) << expected[i].name;
    EXPECT_LT(c.max_rel_diff, max_rel_diff) << expected[i].name;
    EXPECT_EQ(c.top1_disagreements, 0) << expected[i].name;
  }
}

}  // namespace inferscope::testing
