// Parallel sequences in one forward call (CPU backend): greedy replies generated together are
// each the reply generated alone; a batched forward call gives each sequence the logits it gets
// alone (to rounding); the prefix cache serves every sequence of a batch; bad batches are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "engine/runtime/session.h"
#include "tests/support/test_models.h"

namespace inferscope {
namespace {

std::vector<GenerateRequest> requests() {
  std::vector<GenerateRequest> out;
  for (const char* prompt : {"Once upon a time", "The little dog ran to the", "Lily and Ben went to the park. They",
                             "One day"}) {
    GenerateRequest r;
    r.prompt = prompt;
    r.max_tokens = 24;
    r.sampling.temperature = 0.0f;
    out.push_back(r);
  }
  return out;
}

class ParallelSequences : public ::testing::TestWithParam<const char*> {};

TEST_P(ParallelSequences, GreedyRepliesTogetherAreTheRepliesAlone) {
  auto model = testing::load_test_model(GetParam());
  ASSERT_TRUE(model);
  const auto reqs = requests();
  auto together = testing::open_test_session(model);
  ASSERT_TRUE(together);
  std::vector<size_t> streamed(reqs.size());
  auto batch = together->generate_batch(reqs, [&](size_t i, const TokenEvent& e) {
    if (e.id >= 0) streamed[i] += 1;
    return true;
  });
  ASSERT_TRUE(batch) << batch.message();
  ASSERT_EQ(batch->size(), reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    auto alone = testing::open_test_session(model);
    auto r = alone->generate(reqs[i]);
    ASSERT_TRUE(r) << r.message();
    EXPECT_EQ((*batch)[i].token_ids, r->token_ids) << "sequence " << i;
    EXPECT_EQ((*batch)[i].stop_reason, r->stop_reason) << "sequence " << i;
    EXPECT_EQ(streamed[i], r->token_ids.size()) << "each token reported under its sequence";
  }
}

TEST(ParallelSequencesStop, OneSequenceStoppingLeavesTheOthersRunning) {
  auto model = testing::load_test_model("stories260K.gguf");
  ASSERT_TRUE(model);
  const auto reqs = requests();
  ASSERT_GE(reqs.size(), 2u);
  auto together = testing::open_test_session(model);
  ASSERT_TRUE(together);
  auto batch = together->generate_batch(reqs, [&](size_t i, const TokenEvent& e) { return i != 0 || e.id < 0; });
  ASSERT_TRUE(batch) << batch.message();
  EXPECT_EQ((*batch)[0].stop_reason, "cancelled");
  EXPECT_EQ((*batch)[0].token_ids.size(), 1u);
  for (size_t i = 1; i < reqs.size(); ++i) {
    auto alone = testing::open_test_session(model)->generate(reqs[i]);
    ASSERT_TRUE(alone) << alone.message();
    EXPECT_EQ((*batch)[i].token_ids, alone->token_ids) << "sequence " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ParallelSequences,
                         ::testing::Values("stories260K.gguf", "llama-2-tiny-random.gguf", "quant/q4_0.gguf",
                                           "quant/q4_k_m.gguf", "quant/f16.gguf"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& ch : name) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return name;
                         });

// Sequences of different lengths in one call, at different depths: each one's last logits are
// those it gets alone.
TEST(ParallelSequencesExecutor, EachSequenceGetsItsOwnLogits) {
  auto model = testing::load_test_model("stories260K.gguf");
  ASSERT_TRUE(model);
  const int64_t n_vocab = model->config().n_vocab;
  const std::vector<std::vector<int32_t>> prompts = {
      model->tokenizer().encode("Once upon a time there was a cat", true, false),
      model->tokenizer().encode("Tom", true, false),
      model->tokenizer().encode("The sun was shining and the birds sang in the tall green trees", true, false)};
  SessionOptions so;
  so.n_ctx = 256;
  so.n_threads = 2;
  so.max_batch = 16;  // the long prompt spans chunks
  auto s = Session::create(model, so);
  ASSERT_TRUE(s);
  std::vector<std::vector<float>> alone(prompts.size(), std::vector<float>(static_cast<size_t>(n_vocab)));
  auto single = Session::create(model, so);
  for (size_t i = 0; i < prompts.size(); ++i) {
    (*single)->executor().clear();
    ASSERT_TRUE((*single)->executor().forward(0, prompts[i], false, alone[i].data()));
  }
  ASSERT_TRUE((*s)->reserve_sequences(3));
  ForwardExecutor& fp = (*s)->executor();
  ASSERT_GE(fp.n_slots(), 3);
  fp.clear();
  std::vector<std::vector<float>> got(prompts.size(), std::vector<float>(static_cast<size_t>(n_vocab)));
  std::vector<SequenceTokens> batch;
  for (size_t i = 0; i < prompts.size(); ++i) batch.push_back({static_cast<int>(i), prompts[i], got[i].data()});
  ASSERT_TRUE(fp.forward_batch(batch));
  for (size_t i = 0; i < prompts.size(); ++i) {
    double worst = 0;
    for (int64_t v = 0; v < n_vocab; ++v) worst = std::max<double>(worst, std::fabs(got[i][v] - alone[i][v]));
    EXPECT_LT(worst, 1e-4) << "sequence " << i;
    EXPECT_EQ(fp.kv_length(static_cast<int>(i)), static_cast<int64_t>(prompts[i].size()));
  }
  // Wrong: the same slot twice, a slot out of range, no logits.
  std::vector<SequenceTokens> twice = {{0, prompts[0], got[0].data()}, {0, prompts[1], got[1].data()}};
  EXPECT_FALSE(fp.forward_batch(twice));
  std::vector<SequenceTokens> outside = {{7, prompts[0], got[0].data()}};
  EXPECT_FALSE(fp.forward_batch(outside));
  std::vector<SequenceTokens> nowhere = {{0, prompts[0], nullptr}};
  EXPECT_FALSE(fp.forward_batch(nowhere));
}

TEST(ParallelSequencesExecutor, EverySequenceOfABatchReusesTheCachedPrefix) {
  auto model = testing::load_test_model("stories260K.gguf");
  ASSERT_TRUE(model);
  auto s = testing::open_test_session(model);
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->reserve_sequences(3));  // growing the slots later would start a new cache
  const std::string shared =
      "Once upon a time, there was a little girl named Lily. She loved to play outside in the park with her friends.";
  GenerateRequest first;
  first.prompt = shared;
  first.max_tokens = 1;
  ASSERT_TRUE(s->generate(first));
  std::vector<GenerateRequest> reqs(3, first);
  reqs[0].prompt += " One day";
  reqs[1].prompt += " Then";
  reqs[2].prompt += " The end";
  auto r = s->generate_batch(reqs);
  ASSERT_TRUE(r) << r.message();
  for (const GenerateResult& g : *r) EXPECT_GE(g.reused_tokens, 16);
}

}  // namespace
}  // namespace inferscope
