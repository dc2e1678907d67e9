// The reply pipeline through its sink alone (no Qt, no HTTP), on stories260K: a question asked
// again is answered by the semantic cache without running the model; a cloud tier that died
// after its probe leaves the reply to the local model with a notice; a draft model of another
// vocabulary fails the reply with the reason; a sink that cancels stops the reply within one
// step; stop strings cut the reply; the server's way (start, then the LocalReply's tokens and
// finish) gives the reply answer() gives; harmony's control tokens (gpt-oss) move the reply
// between its reasoning and its answer.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "engine/gguf/gguf_writer.h"
#include "engine/reply/reply_pipeline.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/stories_server.h"
#include "tests/support/test_models.h"
#include "tests/support/testdata.h"

namespace inferscope::reply {
namespace {

// What the pipeline told the front end.
class RecordingSink : public ReplySink {
 public:
  void answering(const ReplyHead& head) override { heads.push_back(head); }
  bool text(const ReplyPiece& piece) override {
    received += piece.text;
    if (piece.reasoning) reasoning += piece.text;
    if (piece.token >= 0) tokens += 1;
    return true;
  }
  void notice(ReplyNotice kind, const std::string& message) override { notices.push_back({kind, message}); }
  bool cancelled() const override { return cancel_after > 0 && tokens >= cancel_after; }

  bool noticed(ReplyNotice kind) const {
    for (const auto& [k, message] : notices) {
      if (k == kind) return true;
    }
    return false;
  }

  std::vector<ReplyHead> heads;
  std::string received;
  std::string reasoning;  // the part of `received` marked as reasoning
  int tokens = 0;
  int cancel_after = 0;  // > 0: cancelled once this many tokens came
  std::vector<std::pair<ReplyNotice, std::string>> notices;
};

class ReplyPipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = testing::load_test_model("stories260K.gguf");
    ASSERT_TRUE(model_);
    session_ = testing::open_test_session(model_);
    ASSERT_TRUE(session_);
    auto pipeline = ReplyPipeline::create(*session_);
    ASSERT_TRUE(pipeline) << pipeline.message();
    pipeline_ = std::move(*pipeline);
  }

  static ReplyRequest greedy(const std::string& prompt, int32_t max_tokens = 16) {
    ReplyRequest r;
    r.prompt = prompt;
    r.max_tokens = max_tokens;
    r.sampling.temperature = 0;
    return r;
  }

  ReplyOutcome answer(const ReplyRequest& request, RecordingSink& sink) {
    ReplyResult result = pipeline_->answer(request, sink);
    if (auto* error = std::get_if<ReplyError>(&result)) {
      ADD_FAILURE() << error->message;
      return {};
    }
    return std::get<ReplyOutcome>(result);
  }

  std::shared_ptr<const Model> model_;
  std::unique_ptr<Session> session_;
  std::unique_ptr<ReplyPipeline> pipeline_;
};

TEST_F(ReplyPipelineTest, ACacheHitSkipsTheGeneration) {
  auto cache = ReplyCache::open("");
  ASSERT_TRUE(cache) << cache.message();
  pipeline_->set_cache(std::move(*cache));
  ReplyRequest request = greedy("Once upon a time, a little dog");
  request.cache.enabled = true;
  RecordingSink first;
  const ReplyOutcome generated = answer(request, first);
  ASSERT_TRUE(generated.local);
  EXPECT_FALSE(generated.text.empty());
  ASSERT_TRUE(generated.head.cache);
  EXPECT_FALSE(generated.head.cache->lookup.hit);

  const uint64_t calls = session_->executor().counters().forward_calls;
  RecordingSink again;
  const ReplyOutcome cached = answer(request, again);
  EXPECT_EQ(cached.head.source, ReplySource::SemanticCache);
  EXPECT_FALSE(cached.local);
  EXPECT_EQ(cached.text, generated.text);
  EXPECT_EQ(again.received, generated.text);
  EXPECT_EQ(again.tokens, 0);
  ASSERT_EQ(again.heads.size(), 1u);
  EXPECT_EQ(again.heads.front().source, ReplySource::SemanticCache);
  EXPECT_EQ(session_->executor().counters().forward_calls, calls) << "the model ran for a cached reply";

  ReplyRequest other = request;
  other.sampling.seed = 7;
  other.sampling.temperature = 0.5f;
  RecordingSink different;
  EXPECT_EQ(answer(other, different).head.source, ReplySource::Local) << "other settings, another scope";
}

TEST_F(ReplyPipelineTest, ACloudThatDiedFallsBackToTheLocalModelWithANoticeOrFailsTheReply) {
  auto cloud = testing::start_stories_server();
  ASSERT_TRUE(cloud);
  route::RouteConfig config;
  config.clouds.push_back({"http://127.0.0.1:" + std::to_string(cloud->port()) + "/v1", cloud->model_name(), "",
                           std::chrono::seconds(30)});
  config.routing.policy = route::RoutePolicy::CloudFirst;
  std::shared_ptr<ReplyRouting> routing = ReplyRouting::create(config);
  config.routing.fallback = route::Fallback::None;
  std::shared_ptr<ReplyRouting> strict = ReplyRouting::create(config);
  ASSERT_EQ(routing->reachable(), 1u);
  ASSERT_EQ(strict->reachable(), 1u);
  cloud->stop();  // after its probe

  pipeline_->set_routing(routing);
  RecordingSink sink;
  const ReplyOutcome outcome = answer(greedy("Once upon a time"), sink);
  ASSERT_TRUE(outcome.local);
  EXPECT_FALSE(outcome.text.empty());
  ASSERT_TRUE(outcome.head.route);
  EXPECT_EQ(outcome.head.route->tier, route::Tier::Cloud) << "the router chose the cloud";
  EXPECT_EQ(outcome.head.source, ReplySource::Local);
  EXPECT_NE(outcome.head.fallback.find("the local model answers"), std::string::npos) << outcome.head.fallback;
  EXPECT_TRUE(sink.noticed(ReplyNotice::RouteFallback));
  EXPECT_TRUE(sink.noticed(ReplyNotice::RouteTierFailed));
  EXPECT_EQ(sink.received, outcome.text);

  pipeline_->set_routing(strict);
  RecordingSink refused;
  const ReplyResult result = pipeline_->answer(greedy("Once upon a time"), refused);
  ASSERT_TRUE(std::holds_alternative<ReplyError>(result));
  EXPECT_EQ(std::get<ReplyError>(result).kind, ReplyFailure::Cloud);
  EXPECT_NE(std::get<ReplyError>(result).message.find("allows no fallback"), std::string::npos);
  EXPECT_TRUE(refused.received.empty());
}

TEST_F(ReplyPipelineTest, ADraftThatCannotBeUsedFailsTheReplyWithTheReason) {
  ReplyRequest request = greedy("Once upon a time");
  request.draft.source = DraftSource::Model;
  request.draft.model_path = testing::testdata("llama-2-tiny-random.gguf");
  RecordingSink sink;
  const ReplyResult result = pipeline_->answer(request, sink);
  ASSERT_TRUE(std::holds_alternative<ReplyError>(result));
  const ReplyError& error = std::get<ReplyError>(result);
  EXPECT_EQ(error.kind, ReplyFailure::Draft);
  EXPECT_EQ(error.message.rfind("the speculative draft cannot be used: ", 0), 0u) << error.message;
  EXPECT_NE(error.message.find("32000 and 512 tokens"), std::string::npos) << error.message;
  EXPECT_TRUE(sink.received.empty());
  EXPECT_TRUE(sink.heads.empty()) << "nothing answered";

  request.draft.model_path = testing::testdata("derived/stories260K-moe4-distinct.gguf");
  RecordingSink drafted;
  const ReplyOutcome outcome = answer(request, drafted);
  ASSERT_TRUE(outcome.local);
  EXPECT_TRUE(outcome.drafted_with_model);
  EXPECT_GT(outcome.local->draft_tokens, 0);
  EXPECT_NE(pipeline_->draft_model(), nullptr);
}

TEST_F(ReplyPipelineTest, ACancelStopsWithinOneStep) {
  RecordingSink whole;
  const ReplyOutcome full = answer(greedy("Once upon a time", 32), whole);
  ASSERT_TRUE(full.local);
  ASSERT_GT(full.local->token_ids.size(), 4u);

  RecordingSink sink;
  sink.cancel_after = 3;
  const ReplyOutcome cancelled = answer(greedy("Once upon a time", 32), sink);
  ASSERT_TRUE(cancelled.local);
  EXPECT_EQ(cancelled.local->stop_reason, "cancelled");
  EXPECT_EQ(cancelled.local->token_ids.size(), 3u);
  EXPECT_EQ(sink.tokens, 3);
}

TEST_F(ReplyPipelineTest, StopStringsCutTheReply) {
  RecordingSink whole;
  const ReplyOutcome full = answer(greedy("Once upon a time", 32), whole);
  ASSERT_TRUE(full.local);
  const size_t space = full.text.find(' ', 2);
  ASSERT_NE(space, std::string::npos) << full.text;
  ReplyRequest request = greedy("Once upon a time", 32);
  request.stop = {full.text.substr(space, 2)};
  RecordingSink sink;
  const ReplyOutcome cut = answer(request, sink);
  EXPECT_TRUE(cut.stopped_at_string);
  EXPECT_EQ(cut.text, full.text.substr(0, space));
  EXPECT_EQ(sink.received, cut.text);
}

TEST_F(ReplyPipelineTest, TheServersWayGivesTheSameReply) {
  const ReplyRequest request = greedy("Once upon a time", 24);
  RecordingSink direct;
  const ReplyOutcome answered = answer(request, direct);
  ASSERT_TRUE(answered.local);

  RecordingSink sink;
  StartedReply started = pipeline_->start(request, sink);
  ASSERT_TRUE(std::holds_alternative<LocalReply>(started));
  LocalReply& local = std::get<LocalReply>(started);
  auto result = session_->generate(local.request(), [&](const TokenEvent& e) { return local.on_token(e); });
  auto finished = local.finish(std::move(result));
  ASSERT_TRUE(std::holds_alternative<ReplyOutcome>(finished));
  const ReplyOutcome& queued = std::get<ReplyOutcome>(finished);
  EXPECT_EQ(queued.local->token_ids, answered.local->token_ids);
  EXPECT_EQ(sink.received, direct.received);
}

TEST_F(ReplyPipelineTest, APromptLongerThanTheContextIsABadRequest) {
  std::string prompt;
  for (int i = 0; i < 200; ++i) prompt += "Once upon a time ";
  RecordingSink sink;
  const ReplyResult result = pipeline_->answer(greedy(prompt), sink);
  ASSERT_TRUE(std::holds_alternative<ReplyError>(result));
  EXPECT_EQ(std::get<ReplyError>(result).kind, ReplyFailure::BadRequest);
  EXPECT_NE(std::get<ReplyError>(result).message.find("the context holds 256"), std::string::npos);
}

// stories260K with gpt-oss's chat template: the prompt ends in "<|start|>assistant", and the
// tokens a gpt-oss model writes after it (its markers print as text) come apart into the
// analysis channel's reasoning and the final channel's answer; the outcome's text is the answer
// alone, and the markers reach the front end nowhere.
TEST_F(ReplyPipelineTest, HarmonyChannelsSplitTheReasoningFromTheAnswer) {
  auto file = gguf::File::open(testing::testdata("stories260K.gguf"));
  ASSERT_TRUE(file) << file.message();
  std::ifstream in(std::string(INFERSCOPE_SOURCE_DIR) + "/tests/chat/templates/2026/openai-gpt-oss-120b.jinja");
  const std::string harmony_template((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(harmony_template.empty());
  gguf::Writer w;
  w.copy_metadata(**file, "");
  w.add_string("tokenizer.chat_template", harmony_template);
  for (const gguf::TensorInfo& t : (*file)->tensors()) w.add_tensor_copy(*file, t);
  const std::string path = (testing::scratch_dir("harmony-reply") / "m.gguf").string();
  ASSERT_TRUE(w.write(path));
  auto model = Model::load(path);
  ASSERT_TRUE(model) << model.message();
  auto session = testing::open_test_session(*model);
  ASSERT_TRUE(session);
  auto pipeline = ReplyPipeline::create(*session);
  ASSERT_TRUE(pipeline) << pipeline.message();

  ReplyRequest request = greedy("");
  request.messages = {{"user", "What is 2+2?"}};
  RecordingSink sink;
  StartedReply started = (*pipeline)->start(request, sink);
  ASSERT_TRUE(std::holds_alternative<LocalReply>(started));
  LocalReply& local = std::get<LocalReply>(started);
  const std::string& prompt = local.request().prompt;
  ASSERT_EQ(prompt.substr(prompt.size() - 18), "<|start|>assistant") << prompt;
  for (const char* piece : {"<|channel|>", "analysis", "<|message|>", "Simple sum.", "<|end|>", "<|start|>", "assistant",
                            "<|channel|>", "final", "<|message|>", "It is ", "4."}) {
    EXPECT_TRUE(local.on_token(TokenEvent{.id = 2, .text = piece}));
  }
  auto finished = local.finish(GenerateResult{});
  ASSERT_TRUE(std::holds_alternative<ReplyOutcome>(finished));
  EXPECT_EQ(std::get<ReplyOutcome>(finished).text, "It is 4.");
  EXPECT_EQ(std::get<ReplyOutcome>(finished).reasoning, "Simple sum.");
  EXPECT_EQ(sink.reasoning, "Simple sum.");
  EXPECT_EQ(sink.received, "Simple sum.It is 4.");
}

}  // namespace
}  // namespace inferscope::reply
