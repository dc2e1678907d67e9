// ForwardExecutor::verify on the Vulkan backend: the logits of drafted tokens verified in one
// call are bit for bit those of decoding them one call at a time, and so are the KV rows it
// leaves (Chunk::batch_invariant: the one-token products, attention row by row), for weight
// types the matvec multiplies in int8 (32-block, super-block) and in float, an MoE model, and
// drafts of 1, 5, 9 and 20 tokens: above the GPU's matmat threshold (4), below and above the 8
// tokens a matvec or attention workgroup takes at most, and over several such groups.
//
// CPU drivers (lavapipe) run the one-token matvec layout at every batch size, where a batch's
// rows already come out as the rows alone; GPUs multiply batches of more than 4 tokens with the
// tiled matmat, in float. The second test makes those choices on any device (MatmulOverrides,
// on a ForwardPass over VulkanOps of this binary), so that the check has something to catch
// on lavapipe too.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/backend/backend_registry.h"
#include "engine/backend/vulkan/ops/vk_matmul.h"
#include "engine/backend/vulkan/vk_ops.h"
#include "engine/graph/forward_pass.h"
#include "engine/runtime/session.h"
#include "tests/support/logit_comparison.h"
#include "tests/support/test_models.h"
#include "tests/support/vulkan_device.h"
#include "tests/support/verification_check.h"

namespace inferscope {
namespace {

// 20 drafted tokens after "Once upon a time": verifies the first 1, 5, 9 and 20 of them.
void expect_verification_as_decoding(ForwardExecutor& executor, const Model& model) {
  const auto n_vocab = static_cast<int32_t>(model.config().n_vocab);
  const std::vector<int32_t> prompt = model.tokenizer().encode("Once upon a time", true, false);
  std::vector<int32_t> drafted;
  for (int32_t i = 0; i < 20; ++i) drafted.push_back(1 + (i * 37 + 11) % (n_vocab - 1));
  for (size_t length : {size_t{1}, size_t{5}, size_t{9}, size_t{20}}) {
    const auto check = testing::check_verification(executor, prompt, std::span(drafted).first(length), 7);
    const std::string where = std::to_string(length) + " drafted";
    ASSERT_EQ(check.error, "") << where;
    EXPECT_EQ(check.first_different, -1) << where;
    EXPECT_TRUE(check.kv_rows_identical) << where;
  }
}

class VulkanVerification : public ::testing::TestWithParam<std::string> {};

TEST_P(VulkanVerification, DraftedTokensVerifyAsTheyDecode) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  auto model = testing::load_test_model(GetParam());
  ASSERT_TRUE(model);
  auto session = testing::open_backend_session(model, "vulkan", 128);
  ASSERT_TRUE(session);
  ASSERT_EQ(session->executor().backend_name().rfind("vulkan", 0), 0u) << session->executor().backend_name();
  expect_verification_as_decoding(session->executor(), *model);
}

INSTANTIATE_TEST_SUITE_P(Models, VulkanVerification,
                         ::testing::Values("quant/q4_0.gguf", "quant/q4_k_m.gguf", "quant/f16.gguf", "stories260K.gguf",
                                           "derived/stories260K-moe4-distinct.gguf"),
                         [](const auto& info) { return testing::case_name(info.param); });

// A GPU's product choices while it lives: matvec with a workgroup per row group (shared-memory
// sums) up to 4 tokens, the tiled matmat in float above.
class GpuMatmulChoices {
 public:
  GpuMatmulChoices() {
    vulkan::MatmulOverrides o;
    o.matvec_rowwise = 0;
    o.max_matvec_tokens = 4;
    vulkan::set_matmul_overrides(o);
  }
  ~GpuMatmulChoices() { vulkan::set_matmul_overrides({}); }
  GpuMatmulChoices(const GpuMatmulChoices&) = delete;
  GpuMatmulChoices& operator=(const GpuMatmulChoices&) = delete;
};

class VulkanVerificationWithGpuChoices : public ::testing::TestWithParam<std::string> {};

TEST_P(VulkanVerificationWithGpuChoices, DraftedTokensVerifyAsTheyDecode) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  auto model = testing::load_test_model(GetParam());
  ASSERT_TRUE(model);
  GpuMatmulChoices gpu_choices;
  auto device = vulkan::Device::create(0);
  ASSERT_TRUE(device) << device.message();
  ForwardOptions options;
  options.n_ctx = 128;
  options.max_batch = 32;
  auto pass = ForwardPass::create(model, std::make_unique<vulkan::VulkanOps>(model, std::move(*device)), options);
  ASSERT_TRUE(pass) << pass.message();
  expect_verification_as_decoding(**pass, *model);
}

INSTANTIATE_TEST_SUITE_P(Models, VulkanVerificationWithGpuChoices,
                         ::testing::Values("quant/q4_0.gguf", "quant/q4_k_m.gguf", "quant/f16.gguf"),
                         [](const auto& info) { return testing::case_name(info.param); });

}  // namespace
}  // namespace inferscope
