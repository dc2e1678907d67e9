// Speculative decoding on the Vulkan backend, which runs the shared forward pass: a self-draft's
// logits are those of the model cut after the same layers (on Vulkan too), and greedy replies
// with layer-skip and draft-model drafts are the Vulkan backend's plain replies.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/backend/backend_registry.h"
#include "engine/runtime/draft_model.h"
#include "engine/runtime/session.h"
#include "tests/support/edited_models.h"
#include "tests/support/test_models.h"
#include "tests/support/vulkan_device.h"

namespace inferscope {
namespace {

TEST(VulkanSpeculative, ASelfDraftIsTheModelCutAfterTheSameLayers) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  auto model = testing::load_test_model("stories260K.gguf");
  auto cut = testing::load_first_layers("stories260K.gguf", 2);
  ASSERT_TRUE(model && cut);
  auto full = testing::open_backend_session(model, "vulkan");
  auto reference = testing::open_backend_session(cut, "vulkan");
  ASSERT_TRUE(full && reference);
  const std::vector<int32_t> tokens = model->tokenizer().encode("Once upon a time, there was a cat", true, false);
  const auto n_vocab = static_cast<size_t>(model->config().n_vocab);
  std::vector<float> drafted(n_vocab), expected(n_vocab);
  for (size_t i = 0; i < tokens.size(); ++i) {  // one token per call: decode steps over drafted positions
    const auto token = std::span(tokens).subspan(i, 1);
    ASSERT_TRUE(full->executor().forward_layers(0, token, 2, drafted.data()));
    ASSERT_TRUE(reference->executor().forward(0, token, false, expected.data()));
  }
  float difference = 0;
  for (size_t i = 0; i < n_vocab; ++i) difference = std::max(difference, std::abs(drafted[i] - expected[i]));
  EXPECT_LE(difference, 1e-4f);
}

TEST(VulkanSpeculative, RepliesWithLayerAndModelDraftsAreThePlainReply) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  auto model = testing::load_test_model("stories260K.gguf");
  auto draft_file = testing::load_test_model("derived/stories260K-moe4-distinct.gguf");
  ASSERT_TRUE(model && draft_file);
  GenerateRequest request;
  request.prompt = "Once upon a time, there was a little girl named Lily. She loved to play outside.";
  request.max_tokens = 48;
  request.sampling.temperature = 0;
  auto plain = testing::open_backend_session(model, "vulkan")->generate(request);
  ASSERT_TRUE(plain) << plain.message();
  auto skipping = testing::open_backend_session(model, "vulkan");
  request.draft = {DraftSource::LayerSkip, 4, nullptr, 3};
  auto by_layers = skipping->generate(request);
  ASSERT_TRUE(by_layers) << by_layers.message();
  EXPECT_EQ(by_layers->token_ids, plain->token_ids);
  EXPECT_GT(by_layers->draft_tokens, 0);
  auto drafting = testing::open_backend_session(model, "vulkan");
  auto drafter = DraftModel::create(draft_file, drafting->draft_target());
  ASSERT_TRUE(drafter) << drafter.message();
  request.draft = {DraftSource::Model, 4, *drafter, 0};
  auto by_model = drafting->generate(request);
  ASSERT_TRUE(by_model) << by_model.message();
  EXPECT_EQ(by_model->token_ids, plain->token_ids);
  EXPECT_GT(by_model->accepted_tokens, 0);
}

}  // namespace
}  // namespace inferscope
