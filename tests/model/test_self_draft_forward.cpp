// ForwardExecutor::forward_layers, the forward pass of self-drafting: its logits are those of the
// model cut after the same layers (written as a file of its own), its positions read each other
// like full ones, a call through more layers is refused while they are held, and they never
// reach the prefix cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/runtime/session.h"
#include "tests/support/edited_models.h"
#include "tests/support/test_models.h"

namespace inferscope {
namespace {

constexpr const char* kStory = "Once upon a time, there was a little girl named Lily. She loved to play";

float max_abs_difference(const std::vector<float>& a, const std::vector<float>& b) {
  float d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

class SelfDraftForward : public ::testing::TestWithParam<const char*> {};

// The prompt in one call, then four tokens one at a time (queries over the drafted positions).
TEST_P(SelfDraftForward, ItsLogitsAreThoseOfTheModelCutAfterTheSameLayers) {
  auto model = testing::load_test_model(GetParam());
  ASSERT_TRUE(model);
  const std::vector<int32_t> prompt = model->tokenizer().encode(kStory, true, false);
  const std::vector<int32_t> next = model->tokenizer().encode(" in the park with her dog", false, false);
  const auto n_vocab = static_cast<size_t>(model->config().n_vocab);
  for (int64_t layers = 1; layers <= model->config().n_layer; layers += 2) {
    SCOPED_TRACE(layers);
    auto cut = testing::load_first_layers(GetParam(), layers);
    ASSERT_TRUE(cut);
    auto full = testing::open_test_session(model);
    auto reference = testing::open_test_session(cut);
    std::vector<float> drafted(n_vocab), expected(n_vocab);
    ASSERT_TRUE(full->executor().forward_layers(0, prompt, layers, drafted.data()));
    ASSERT_TRUE(reference->executor().forward(0, prompt, false, expected.data()));
    EXPECT_LE(max_abs_difference(drafted, expected), 1e-5f);
    for (int32_t token : next) {
      ASSERT_TRUE(full->executor().forward_layers(0, std::span(&token, 1), layers, drafted.data()));
      ASSERT_TRUE(reference->executor().forward(0, std::span(&token, 1), false, expected.data()));
      EXPECT_LE(max_abs_difference(drafted, expected), 1e-5f) << token;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, SelfDraftForward,
                         ::testing::Values("stories260K.gguf", "derived/stories260K-moe4-distinct.gguf",
                                           "derived/stories260K-qwen2moe.gguf"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& ch : name) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return name;
                         });

// A drafted position holds its first layers' KV only: a deeper call would read rows never
// written, so it fails until truncate() removes the position; then the slot is what it was.
TEST(SelfDraftForwardRows, ADeeperCallWaitsUntilTheDraftLeaves) {
  auto model = testing::load_test_model("stories260K.gguf");
  ASSERT_TRUE(model);
  const std::vector<int32_t> prompt = model->tokenizer().encode(kStory, true, false);
  const auto n_vocab = static_cast<size_t>(model->config().n_vocab);
  auto session = testing::open_test_session(model);
  ForwardExecutor& ex = session->executor();
  std::vector<float> logits(n_vocab), plain(n_vocab);
  ASSERT_TRUE(ex.forward(0, prompt, false, logits.data()));
  const int32_t token = model->tokenizer().encode(" ball", false, false).front();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(ex.forward_layers(0, std::span(&token, 1), 2, logits.data()));
  const Status deeper = ex.forward(0, std::span(&token, 1), false, logits.data());
  EXPECT_FALSE(deeper);
  EXPECT_NE(deeper.message().find("self-draft"), std::string::npos) << deeper.message();
  EXPECT_FALSE(ex.forward_layers(0, std::span(&token, 1), 3, logits.data()));
  EXPECT_TRUE(ex.forward_layers(0, std::span(&token, 1), 1, logits.data())) << "fewer layers read what is there";
  ex.truncate(0, static_cast<int64_t>(prompt.size()) + 1);
  EXPECT_FALSE(ex.forward(0, std::span(&token, 1), false, logits.data())) << "one drafted position is still held";
  ex.truncate(0, static_cast<int64_t>(prompt.size()));
  ASSERT_TRUE(ex.forward(0, std::span(&token, 1), false, logits.data()));
  std::vector<int32_t> whole = prompt;
  whole.push_back(token);
  ASSERT_TRUE(testing::open_test_session(model)->executor().forward(0, whole, false, plain.data()));
  EXPECT_LE(max_abs_difference(logits, plain), 1e-4f);
}

// Drafted positions that fill a KV block do not make it a cached prefix: a later prompt would
// read the block's deeper rows, which the draft never wrote.
TEST(SelfDraftForwardRows, ItsPositionsNeverReachThePrefixCache) {
  auto model = testing::load_test_model("stories260K.gguf");
  ASSERT_TRUE(model);
  const std::vector<int32_t> tokens = model->tokenizer().encode(kStory, true, false);
  ASSERT_GT(tokens.size(), static_cast<size_t>(kDefaultKvBlockSize) + 1);
  const std::span<const int32_t> head = std::span(tokens).first(4);
  std::vector<float> logits(static_cast<size_t>(model->config().n_vocab));

  auto full = testing::open_test_session(model);
  ASSERT_TRUE(full->executor().forward(0, tokens, false, logits.data()));
  EXPECT_EQ(full->executor().reuse_prefix(0, tokens), kDefaultKvBlockSize) << "a block written whole is offered";

  auto drafted = testing::open_test_session(model);
  ForwardExecutor& ex = drafted->executor();
  ASSERT_TRUE(ex.forward(0, head, false, logits.data()));
  for (size_t i = head.size(); i < tokens.size(); ++i) {
    ASSERT_TRUE(ex.forward_layers(0, std::span(tokens).subspan(i, 1), 2, logits.data()));
  }
  EXPECT_EQ(ex.reuse_prefix(0, tokens), 0);
}

TEST(SelfDraftForwardRows, RefusesALayerCountTheModelDoesNotHave) {
  auto model = testing::load_test_model("stories260K.gguf");
  ASSERT_TRUE(model);
  auto session = testing::open_test_session(model);
  std::vector<float> logits(static_cast<size_t>(model->config().n_vocab));
  const int32_t token = 1;
  for (int64_t layers : {int64_t{0}, model->config().n_layer + 1}) {
    const Status refused = session->executor().forward_layers(0, std::span(&token, 1), layers, logits.data());
    EXPECT_FALSE(refused);
    EXPECT_NE(refused.message().find("1 to 5 layers"), std::string::npos) << refused.message();
  }
  EXPECT_EQ(session->executor().kv_length(0), 0);
}

}  // namespace
}  // namespace inferscope
