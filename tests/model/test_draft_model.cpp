// DraftModel (speculative decoding's draft from a smaller model): it drafts what the model
// generates greedily by itself, its KV cache follows the contexts it is asked about (a rejected
// draft's positions leave it), and a model of another vocabulary is refused with the difference.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/runtime/draft_model.h"
#include "engine/runtime/session.h"
#include "tests/support/edited_models.h"
#include "tests/support/test_models.h"

namespace inferscope {
namespace {

constexpr const char* kDraftFile = "derived/stories260K-moe4-distinct.gguf";

// stories260K's session (context 512) with kDraftFile drafting for it.
struct Drafting {
  std::shared_ptr<const Model> target = testing::load_test_model("stories260K.gguf");
  std::shared_ptr<const Model> draft_file = testing::load_test_model(kDraftFile);
  std::unique_ptr<Session> session;
  std::shared_ptr<DraftModel> drafter;

  Drafting() {
    if (!target || !draft_file) return;
    session = testing::open_test_session(target, 512);
    auto created = DraftModel::create(draft_file, session->draft_target());
    EXPECT_TRUE(created) << created.message();
    if (created) drafter = std::move(*created);
  }
  bool ready() const { return drafter != nullptr; }
};

std::vector<int32_t> greedy_reply(std::shared_ptr<const Model> model, const std::string& prompt, int32_t n) {
  GenerateRequest r;
  r.prompt = prompt;
  r.max_tokens = n;
  r.sampling.temperature = 0;
  auto result = testing::open_test_session(model, 512)->generate(r);
  EXPECT_TRUE(result) << result.message();
  return result ? result->token_ids : std::vector<int32_t>{};
}

TEST(DraftModel, DraftsWhatItGeneratesGreedilyByItself) {
  Drafting d;
  ASSERT_TRUE(d.ready());
  const auto& [target, draft_file, session, drafter] = d;
  const std::string prompt = "Once upon a time, there was a dog";
  const std::vector<int32_t> context = target->tokenizer().encode(prompt, true, false);
  auto draft = drafter->draft(context, static_cast<int64_t>(context.size()), 8);
  ASSERT_TRUE(draft) << draft.message();
  EXPECT_EQ(*draft, greedy_reply(draft_file, prompt, 8));
  EXPECT_EQ(drafter->kv_length(), static_cast<int64_t>(context.size()) + 7) << "the last drafted token is not fed";
}

// After a draft, a context that took part of it and then another token: the cache keeps the
// shared prefix only, and the next draft is the one a fresh draft model makes.
TEST(DraftModel, ItsCacheFollowsTheContext) {
  Drafting d;
  ASSERT_TRUE(d.ready());
  const auto& [target, draft_file, session, drafter] = d;
  std::vector<int32_t> context = target->tokenizer().encode("Once upon a time, there was a dog", true, false);
  auto first = drafter->draft(context, static_cast<int64_t>(context.size()), 6);
  ASSERT_TRUE(first && first->size() == 6u);
  // Two drafted tokens accepted, then a token of the target's own instead of the third.
  context.insert(context.end(), first->begin(), first->begin() + 2);
  const int32_t other = (*first)[2] == 13 ? 14 : 13;
  context.push_back(other);
  auto second = drafter->draft(context, static_cast<int64_t>(context.size()), 4);
  ASSERT_TRUE(second) << second.message();
  EXPECT_EQ(drafter->kv_length(), static_cast<int64_t>(context.size()) + 3);
  auto fresh = DraftModel::create(draft_file, session->draft_target());
  ASSERT_TRUE(fresh);
  auto expected = (*fresh)->draft(context, static_cast<int64_t>(context.size()), 4);
  ASSERT_TRUE(expected);
  EXPECT_EQ(*second, *expected);
  // A context sharing nothing but BOS starts over from there.
  const std::vector<int32_t> unrelated = target->tokenizer().encode("The cat sat", true, false);
  auto third = drafter->draft(unrelated, static_cast<int64_t>(unrelated.size()), 3);
  ASSERT_TRUE(third);
  auto third_fresh = (*fresh)->draft(unrelated, static_cast<int64_t>(unrelated.size()), 3);
  ASSERT_TRUE(third_fresh);
  EXPECT_EQ(*third, *third_fresh);
  EXPECT_EQ(drafter->kv_length(), static_cast<int64_t>(unrelated.size()) + 2);
}

TEST(DraftModel, DraftsNothingWhereTheContextHasNoRoom) {
  auto target = testing::load_test_model("stories260K.gguf");
  ASSERT_TRUE(target);
  auto session = testing::open_test_session(target, 64);
  auto drafter = DraftModel::create(target, session->draft_target());
  ASSERT_TRUE(drafter);
  std::vector<int32_t> context;
  while (context.size() < 62) {
    for (int32_t t : target->tokenizer().encode("Once upon a time, there was a girl. ", true, false)) context.push_back(t);
  }
  context.resize(62);
  auto draft = (*drafter)->draft(context, static_cast<int64_t>(context.size()), 8);
  ASSERT_TRUE(draft) << draft.message();
  EXPECT_EQ(draft->size(), 3u) << "62 + 3 - 1 positions fill the context of 64";
  auto none = (*drafter)->draft(std::vector<int32_t>(65, 13), 65, 8);
  ASSERT_TRUE(none) << none.message();
  EXPECT_TRUE(none->empty());
}

// A reply drafted by a draft model reports what the draft model holds (its weights, KV cache
// and scratch) apart from the model's own memory; a reply without one reports none.
TEST(DraftModel, ItsMemoryIsReportedWithTheReply) {
  Drafting d;
  ASSERT_TRUE(d.ready());
  const auto& [target, draft_file, session, drafter] = d;
  GenerateRequest r;
  r.prompt = "Once upon a time";
  r.max_tokens = 8;
  r.sampling.temperature = 0;
  auto plain = session->generate(r);
  r.draft = {DraftSource::Model, 4, drafter, 0};
  auto drafted = session->generate(r);
  ASSERT_TRUE(plain && drafted);
  EXPECT_EQ(plain->memory.draft_model_bytes, 0u);
  EXPECT_EQ(drafted->memory.draft_model_bytes, drafter->memory_bytes());
  EXPECT_GT(drafter->memory_bytes(), draft_file->weights().total_bytes) << "its KV cache and scratch too";
  EXPECT_EQ(drafted->memory.weights_bytes, target->weights().total_bytes);
}

TEST(DraftModel, RefusesAnotherVocabularyNamingTheDifference) {
  auto target = testing::load_test_model("stories260K.gguf");
  auto bigger = testing::load_test_model("llama-2-tiny-random.gguf");
  auto renamed = testing::load_with_token_text("stories260K.gguf", 300, "zebra");
  ASSERT_TRUE(target && bigger && renamed);
  auto session = testing::open_test_session(target);
  auto refused = DraftModel::create(bigger, session->draft_target());
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.message().find("llama-2-tiny-random.gguf"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("32000 and 512 tokens"), std::string::npos) << refused.message();
  auto one_token = DraftModel::create(renamed, session->draft_target());
  ASSERT_FALSE(one_token);
  EXPECT_NE(one_token.message().find("token 300 is \"zebra\" in the draft model and \"" +
                                     target->tokenizer().token_text(300) + "\" in the model"),
            std::string::npos)
      << one_token.message();
  EXPECT_TRUE(check_draft_vocabulary(*testing::load_test_model(kDraftFile), *target));
}

}  // namespace
}  // namespace inferscope
