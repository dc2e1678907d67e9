#include "tests/support/hybrid_backend_check.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/logit_comparison.h"

namespace inferscope::testing {

namespace {

// A prompt of n token ids (no tokenizer needed), different for each seed.
std::vector<int32_t> ids(int n, int seed) {
  std::vector<int32_t> out = {1};
  for (int i = 1; i < n; ++i) out.push_back(static_cast<int32_t>((37 * i + 11 * seed) % 500 + 2));
  return out;
}

struct Step {
  std::string name;
  std::vector<float> logits;
};

// The script; each step's logits (rows of n_vocab) in order.
std::deque<Step> run_script(ForwardExecutor& fp, int64_t V) {
  std::deque<Step> steps;  // a step's logits stay where they are as more steps are added
  auto step = [&](const std::string& name, int64_t rows) -> std::vector<float>& {
    steps.push_back({name, std::vector<float>(static_cast<size_t>(rows * V))});
    return steps.back().logits;
  };
  auto check = [](const Status& st) { EXPECT_TRUE(st) << st.message(); };
  const std::vector<int32_t> prompt = ids(33, 1);
  // A prompt as a session sends it (announced first): its first 32 rows in chunks of 16, the
  // second going on from the state the first left, a checkpoint of the state there (a
  // recurrent_copy), then its last row.
  EXPECT_EQ(fp.reuse_prefix(0, prompt), 0);
  check(fp.forward(0, prompt, false, step("prompt", 1).data()));
  // Every row's logits of 20 more: a span of 16 rows and one of 4, each going on.
  check(fp.forward(0, ids(20, 4), true, step("20 more rows", 20).data()));
  for (const int32_t t : ids(4, 2)) check(fp.forward(0, std::span(&t, 1), false, step("decode", 1).data()));
  // One chunk, two spans: slot 0 goes on, slot 1 starts from a zero state.
  const int32_t next = 77;
  const std::vector<int32_t> other = ids(7, 3);
  std::vector<float>& a = step("batch slot 0", 1);
  std::vector<float>& b = step("batch slot 1", 1);
  const SequenceTokens batch[] = {{0, std::span(&next, 1), a.data()}, {1, other, b.data()}};
  check(fp.forward_batch(batch));
  // Slot 1 takes slot 0's prompt from the prefix cache: the state of the checkpoint at its end.
  EXPECT_EQ(fp.reuse_prefix(1, prompt), 32);
  check(fp.forward(1, std::span(prompt).subspan(32), false, step("reused prefix", 1).data()));
  // A verification of three rows, then back to its first: the state from its checkpoint.
  const int64_t before = fp.kv_length(0);
  const int32_t draft[] = {5, 6, 7};
  check(fp.verify(0, draft, step("verify", 3).data()));
  fp.truncate(0, before + 1);
  const int32_t after = 9;
  check(fp.forward(0, std::span(&after, 1), false, step("after truncate", 1).data()));
  // Slot 1 emptied and started again: its spans start from a zero state, not from what it held.
  fp.truncate(1, 0);
  check(fp.forward(1, other, true, step("slot 1 again", static_cast<int64_t>(other.size())).data()));
  return steps;
}

}  // namespace

ForwardOptions hybrid_check_options() {
  ForwardOptions o;
  o.n_ctx = 256;
  o.n_slots = 2;
  o.max_batch = 16;
  return o;
}

void expect_hybrid_matches_cpu(ForwardExecutor& cpu, ForwardExecutor& gpu, int64_t n_vocab, double max_kl,
                               double max_rel_diff) {
  const std::deque<Step> expected = run_script(cpu, n_vocab);
  const std::deque<Step> got = run_script(gpu, n_vocab);
  ASSERT_EQ(expected.size(), got.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const LogitComparison c = compare_logits(expected[i].logits, got[i].logits, n_vocab);
    std::printf("%-16s KL max %.3g, max |diff| / range %.3g, top-1 disagreements %d\n", expected[i].name.c_str(),
                c.max_kl, c.max_rel_diff, c.top1_disagreements);
    EXPECT_LT(c.max_kl, max_kl) << expected[i].name;
    EXPECT_LT(c.max_rel_diff, max_rel_diff) << expected[i].name;
    EXPECT_EQ(c.top1_disagreements, 0) << expected[i].name;
  }
}

}  // namespace inferscope::testing
