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

namespace inferscope {
namespace {

#define SKIP_WITHOUT_VULKAN()                                                                        \
  do {                                                                                               \
    const BackendDevices d = list_backend_devices("vulkan");                                         \
    if (!d.unavailable_reason.empty()) GTEST_SKIP() << "no Vulkan device: " << d.unavailable_reason; \
  } while (0)

std::unique_ptr<Session> vulkan_session(std::shared_ptr<const Model> model) {
  SessionOptions so;
  so.n_ctx = 256;
  so.n_threads = 2;
  so.backend.backend = "vulkan";
  auto session = Session::create(std::move(model), so);
  EXPECT_TRUE(session) << session.message();
  return session ? std::move(*session) : nullptr;
}

TEST(VulkanSpeculative, ASelfDraftIsTheModelCutAfterTheSameLayers) {
  SKIP_WITHOUT_VULKAN();
  auto model = testing::load_test_model("stories260K.gguf");
  auto cut = testing::load_first_layers("stories260K.gguf", 2);
  ASSERT_TRUE(model && cut);
  auto full = vulkan_session(model);
  auto reference = vulkan_session(cut);
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
  SKIP_WITHOUT_VULKAN();
  auto model = testing::load_test_model("stories260K.gguf");
  auto draft_file = testing::load_test_model("derived/stories260K-moe4-distinct.gguf");
  ASSERT_TRUE(model && draft_file);
  GenerateRequest request;
  request.prompt = "Once upon a time, there was a little girl named Lily. She loved to play outside.";
  request.max_tokens = 48;
  request.sampling.temperature = 0;
  auto plain = vulkan_session(model)->generate(request);
  ASSERT_TRUE(plain) << plain.message();
  auto skipping = vulkan_session(model);
  request.draft = {DraftSource::LayerSkip, 4, nullptr, 3};
  auto by_layers = skipping->generate(request);
  ASSERT_TRUE(by_layers) << by_layers.message();
  EXPECT_EQ(by_layers->token_ids, plain->token_ids);
  EXPECT_GT(by_layers->draft_tokens, 0);
  auto drafting = vulkan_session(model);
  auto drafter = DraftModel::create(draft_file, *drafting);
  ASSERT_TRUE(drafter) << drafter.message();
  request.draft = {DraftSource::Model, 4, *drafter, 0};
  auto by_model = drafting->generate(request);
  ASSERT_TRUE(by_model) << by_model.message();
  EXPECT_EQ(by_model->token_ids, plain->token_ids);
  EXPECT_GT(by_model->accepted_tokens, 0);
}

}  // namespace
}  // namespace inferscope
