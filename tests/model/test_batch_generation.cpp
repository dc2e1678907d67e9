// Continuous batching (BatchGeneration, CPU backend): a request that joins a running batch gets
// the greedy reply it gets alone, and so does the one it joined; a finished sequence frees its
// slot for the next request; a refused request takes nothing; ending the batch cancels what runs.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "engine/runtime/batch_generation.h"
#include "engine/runtime/session.h"
#include "tests/support/test_models.h"

namespace inferscope {
namespace {

GenerateRequest greedy(const std::string& prompt, int32_t max_tokens) {
  GenerateRequest r;
  r.prompt = prompt;
  r.max_tokens = max_tokens;
  r.sampling.temperature = 0.0f;
  return r;
}

// One sequence's outcome and the tokens it streamed.
struct Outcome {
  std::optional<Result<GenerateResult>> done;
  std::vector<int32_t> streamed;
  BatchGeneration::OnToken on_token() {
    return [this](const TokenEvent& e) {
      if (e.id >= 0) streamed.push_back(e.id);
      return true;
    };
  }
  BatchGeneration::OnDone on_done() {
    return [this](Result<GenerateResult> r) {
      EXPECT_FALSE(done) << "on_done called twice";
      done = std::move(r);
    };
  }
};

std::unique_ptr<BatchGeneration> make_batch(Session& session, int capacity) {
  auto batch = session.start_batch(capacity);
  EXPECT_TRUE(batch) << batch.message();
  return batch ? std::move(*batch) : nullptr;
}

std::vector<int32_t> alone(std::shared_ptr<const Model> model, const GenerateRequest& request) {
  auto r = testing::open_test_session(std::move(model))->generate(request);
  EXPECT_TRUE(r) << r.message();
  return r ? r->token_ids : std::vector<int32_t>{};
}

class LateJoiner : public ::testing::TestWithParam<const char*> {};

TEST_P(LateJoiner, GetsTheReplyItGetsAloneAndSoDoesTheSequenceItJoined) {
  auto model = testing::load_test_model(GetParam());
  ASSERT_TRUE(model);
  const GenerateRequest first = greedy("Once upon a time", 24);
  const GenerateRequest second = greedy("The little dog ran to the", 16);
  auto session = testing::open_test_session(model);
  auto batch = make_batch(*session, 2);
  ASSERT_TRUE(batch);
  Outcome a, b;
  ASSERT_TRUE(batch->add(first, a.on_token(), a.on_done()));
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(batch->step());
  ASSERT_EQ(a.streamed.size(), 6u) << "one token per step";
  ASSERT_TRUE(batch->add(second, b.on_token(), b.on_done())) << "joins while the first runs";
  EXPECT_EQ(batch->active(), 2);
  int steps = 0;
  while (batch->active() > 0) {
    ASSERT_TRUE(batch->step());
    steps += 1;
  }
  ASSERT_TRUE(a.done && *a.done) << (a.done ? a.done->message() : "no result");
  ASSERT_TRUE(b.done && *b.done) << (b.done ? b.done->message() : "no result");
  EXPECT_EQ((*a.done)->token_ids, alone(model, first));
  EXPECT_EQ((*b.done)->token_ids, alone(model, second));
  EXPECT_EQ((*a.done)->token_ids, a.streamed);
  EXPECT_EQ((*b.done)->token_ids, b.streamed);
  EXPECT_LE(steps, 19) << "the second shares the first's remaining steps (18 at most) plus its last sample";
}

INSTANTIATE_TEST_SUITE_P(Models, LateJoiner, ::testing::Values("stories260K.gguf", "quant/q4_0.gguf"),
                         [](const auto& info) { return std::string(info.param) == "stories260K.gguf" ? "stories260K" : "q4_0"; });

TEST(BatchGeneration, AFinishedSequenceFreesItsSlotForTheNextRequest) {
  auto model = testing::load_test_model("stories260K.gguf");
  ASSERT_TRUE(model);
  auto session = testing::open_test_session(model);
  auto batch = make_batch(*session, 1);
  ASSERT_TRUE(batch);
  Outcome a, b, refused;
  ASSERT_TRUE(batch->add(greedy("Once upon a time", 3), a.on_token(), a.on_done()));
  const Status full = batch->add(greedy("One day", 3), refused.on_token(), refused.on_done());
  ASSERT_FALSE(full);
  EXPECT_NE(full.message().find("every slot"), std::string::npos) << full.message();
  while (batch->active() > 0) ASSERT_TRUE(batch->step());
  ASSERT_TRUE(a.done && *a.done);
  EXPECT_EQ((*a.done)->stop_reason, "max_tokens");
  const GenerateRequest next = greedy("One day", 8);
  ASSERT_TRUE(batch->add(next, b.on_token(), b.on_done()));
  while (batch->active() > 0) ASSERT_TRUE(batch->step());
  ASSERT_TRUE(b.done && *b.done);
  EXPECT_EQ((*b.done)->token_ids, alone(model, next));
  EXPECT_FALSE(refused.done) << "a refused request is never reported";
}

TEST(BatchGeneration, ARefusedRequestTakesNothing) {
  auto model = testing::load_test_model("stories260K.gguf");
  ASSERT_TRUE(model);
  auto session = testing::open_test_session(model, 64);
  auto batch = make_batch(*session, 2);
  ASSERT_TRUE(batch);
  Outcome o;
  std::string long_prompt;
  for (int i = 0; i < 100; ++i) long_prompt += "once upon a time ";
  const Status too_long = batch->add(greedy(long_prompt, 4), o.on_token(), o.on_done());
  ASSERT_FALSE(too_long);
  EXPECT_NE(too_long.message().find("exceed the context length of 64"), std::string::npos) << too_long.message();
  GenerateRequest empty = greedy("", 4);
  empty.add_special = false;  // no BOS: no token at all
  EXPECT_FALSE(batch->add(empty, o.on_token(), o.on_done()));
  GenerateRequest beams = greedy("Once", 4);
  beams.beam_width = 2;
  EXPECT_FALSE(batch->add(beams, o.on_token(), o.on_done()));
  EXPECT_EQ(batch->active(), 0);
  EXPECT_TRUE(batch->step()) << "an empty batch steps without a forward call";
  EXPECT_FALSE(o.done);
}

TEST(BatchGeneration, EndingTheBatchCancelsWhatRunsAndKeepsWhatItGenerated) {
  auto model = testing::load_test_model("stories260K.gguf");
  ASSERT_TRUE(model);
  auto session = testing::open_test_session(model);
  Outcome running, waiting_for_prefill;
  {
    auto batch = make_batch(*session, 2);
    ASSERT_TRUE(batch);
    ASSERT_TRUE(batch->add(greedy("Once upon a time", 50), running.on_token(), running.on_done()));
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(batch->step());
    ASSERT_TRUE(batch->add(greedy("One day", 50), waiting_for_prefill.on_token(), waiting_for_prefill.on_done()));
  }
  ASSERT_TRUE(running.done && *running.done);
  EXPECT_EQ((*running.done)->stop_reason, "cancelled");
  EXPECT_EQ((*running.done)->token_ids.size(), 3u);
  ASSERT_TRUE(waiting_for_prefill.done && *waiting_for_prefill.done);
  EXPECT_EQ((*waiting_for_prefill.done)->stop_reason, "cancelled");
  EXPECT_TRUE((*waiting_for_prefill.done)->token_ids.empty());
}

}  // namespace
}  // namespace inferscope
