// Speculative decoding with prompt-lookup drafts (GenerateRequest::draft_lookup, in
// BatchGeneration): greedy and sampled replies are the replies without it, on stories260K and
// the MoE models, for several draft lengths; drafts are made and partly accepted on text that
// repeats; the KV cache after rejected drafts holds what it holds without speculation.
#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "engine/runtime/session.h"
#include "tests/support/test_models.h"

namespace inferscope {
namespace {

// A prompt whose phrases come back, so lookups find drafts.
GenerateRequest repetitive(float temperature, int32_t draft_lookup) {
  GenerateRequest r;
  r.prompt = "Once upon a time, there was a little girl named Lily. She loved to play outside. "
             "Once upon a time, there was a little boy named Tom. He loved to play outside. Once upon a time,";
  r.max_tokens = 96;
  r.sampling.temperature = temperature;
  r.sampling.seed = 42;
  r.draft_lookup = draft_lookup;
  return r;
}

struct Case {
  const char* model;
  float temperature;
};

class SpeculativeDecoding : public ::testing::TestWithParam<Case> {};

TEST_P(SpeculativeDecoding, TheReplyIsTheReplyWithoutIt) {
  auto model = testing::load_test_model(GetParam().model);
  ASSERT_TRUE(model);
  auto plain_session = testing::open_test_session(model, 512);
  auto plain = plain_session->generate(repetitive(GetParam().temperature, 0));
  ASSERT_TRUE(plain) << plain.message();
  EXPECT_EQ(plain->draft_tokens, 0);
  int64_t drafted = 0, accepted = 0;
  for (int32_t draft : {1, 3, 8}) {
    SCOPED_TRACE(draft);
    auto session = testing::open_test_session(model, 512);
    auto fast = session->generate(repetitive(GetParam().temperature, draft));
    ASSERT_TRUE(fast) << fast.message();
    EXPECT_EQ(fast->token_ids, plain->token_ids);
    EXPECT_EQ(fast->text, plain->text);
    EXPECT_EQ(fast->stop_reason, plain->stop_reason);
    EXPECT_LE(fast->accepted_tokens, fast->draft_tokens);
    EXPECT_EQ(session->executor().kv_length(0), plain_session->executor().kv_length(0))
        << "rejected drafts leave the KV cache";
    drafted += fast->draft_tokens;
    accepted += fast->accepted_tokens;
  }
  EXPECT_GT(drafted, 0) << "the repeated phrases give drafts";
  std::printf("[ %s, temperature %.1f: %lld drafted, %lld accepted ]\n", GetParam().model, GetParam().temperature,
              static_cast<long long>(drafted), static_cast<long long>(accepted));
}

INSTANTIATE_TEST_SUITE_P(Models, SpeculativeDecoding,
                         ::testing::Values(Case{"stories260K.gguf", 0.0f}, Case{"stories260K.gguf", 0.8f},
                                           Case{"derived/stories260K-moe4-distinct.gguf", 0.0f},
                                           Case{"derived/stories260K-qwen2moe.gguf", 0.0f}),
                         [](const auto& info) {
                           std::string name = std::string(info.param.model) +
                                              (info.param.temperature > 0 ? "_sampled" : "_greedy");
                           for (char& ch : name) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return name;
                         });

TEST(SpeculativeDecodingStop, MaxTokensAndStopsAreKeptExactly) {
  auto model = testing::load_test_model("stories260K.gguf");
  ASSERT_TRUE(model);
  for (int32_t max_tokens : {1, 2, 5, 17}) {
    GenerateRequest plain = repetitive(0.0f, 0), fast = repetitive(0.0f, 8);
    plain.max_tokens = fast.max_tokens = max_tokens;
    auto a = testing::open_test_session(model, 512)->generate(plain);
    auto b = testing::open_test_session(model, 512)->generate(fast);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(b->token_ids, a->token_ids) << max_tokens;
    EXPECT_EQ(b->token_ids.size(), static_cast<size_t>(max_tokens));
  }
}

}  // namespace
}  // namespace inferscope
