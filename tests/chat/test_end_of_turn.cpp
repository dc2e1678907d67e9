// Generation stops at an end-of-turn token through the real Session on stories260K: the stop
// token ends the reply, is not reported or printed, and the reason says why generation ended.
#include <gtest/gtest.h>

#include <numeric>

#include "engine/runtime/session.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

struct GenerationRun {
  GenerateResult result;
  std::vector<int32_t> reported_ids;  // ids of the token events (-1 for a detokenizer flush)
};

class EndOfTurn : public ::testing::Test {
 protected:
  void SetUp() override {
    auto model = Model::load(testing::testdata("stories260K.gguf"));
    ASSERT_TRUE(model.is_ok()) << model.message();
    SessionOptions so;
    so.n_threads = 1;
    auto session = Session::create(*model, so);
    ASSERT_TRUE(session.is_ok()) << session.message();
    session_ = std::move(*session);
  }

  GenerationRun generate(std::vector<int32_t> stop_ids, int32_t beam_width = 1) {
    GenerateRequest req;
    req.prompt = "Once upon a time";
    req.max_tokens = 12;
    req.sampling.temperature = 0;  // greedy: the same tokens every run
    req.beam_width = beam_width;
    req.stop_token_ids = std::move(stop_ids);
    GenerationRun run;
    auto r = session_->generate(req, [&](const TokenEvent& e) {
      run.reported_ids.push_back(e.id);
      return true;
    });
    EXPECT_TRUE(r.is_ok()) << r.message();
    if (r) run.result = std::move(*r);
    return run;
  }

  std::unique_ptr<Session> session_;
};

TEST_F(EndOfTurn, StopsBeforeTheFirstStopToken) {
  const GenerationRun free_run = generate({});
  ASSERT_EQ(free_run.result.stop_reason, "max_tokens");
  const std::vector<int32_t>& ids = free_run.result.token_ids;
  ASSERT_EQ(ids.size(), 12u);
  // Make the third generated token an end-of-turn token (if it appeared earlier, stopping
  // happens there instead).
  const int32_t stop = ids[2];
  const size_t first = static_cast<size_t>(std::find(ids.begin(), ids.end(), stop) - ids.begin());
  const GenerationRun stopped = generate({stop});
  EXPECT_EQ(stopped.result.stop_reason, "end_of_turn");
  EXPECT_EQ(stopped.result.token_ids, std::vector<int32_t>(ids.begin(), ids.begin() + static_cast<long>(first)));
  EXPECT_EQ(stopped.result.text, session_->model().tokenizer().decode(stopped.result.token_ids));
  for (int32_t id : stopped.reported_ids) EXPECT_NE(id, stop);
}

TEST_F(EndOfTurn, AnyTokenInTheStopSetEndsTheTurnAtOnce) {
  std::vector<int32_t> every_id(static_cast<size_t>(session_->model().tokenizer().n_vocab()));
  std::iota(every_id.begin(), every_id.end(), 0);
  const GenerationRun run = generate(every_id);
  EXPECT_EQ(run.result.stop_reason, "end_of_turn");
  EXPECT_TRUE(run.result.token_ids.empty());
  EXPECT_EQ(run.result.text, "");
  EXPECT_TRUE(run.reported_ids.empty());
}

TEST_F(EndOfTurn, BeamSearchStopsAtStopTokensToo) {
  std::vector<int32_t> every_id(static_cast<size_t>(session_->model().tokenizer().n_vocab()));
  std::iota(every_id.begin(), every_id.end(), 0);
  const GenerationRun run = generate(every_id, 2);
  EXPECT_EQ(run.result.stop_reason, "end_of_turn");
  EXPECT_TRUE(run.result.token_ids.empty());
  EXPECT_EQ(run.result.text, "");
}

}  // namespace
}  // namespace inferscope
