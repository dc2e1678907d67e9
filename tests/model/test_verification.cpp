// ForwardExecutor::verify on the CPU backend: the logits of drafted tokens verified in one call
// are bit for bit those of decoding them one call at a time, and so are the KV rows it leaves,
// for every weight type family the kernels multiply differently (32-block, super-block, ternary,
// float), MoE models, at every SIMD level of this CPU and for drafts on both sides of the kernels'
// panel thresholds (4-8 tokens) and of the 16 tokens the decode kernels regroup at a time. Plain
// forward() calls of these drafts differ from decoding in the last bits on AVX-512 (the prefill
// panels): that is what verify() is for.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "tests/support/logit_comparison.h"
#include "tests/support/simd_levels.h"
#include "tests/support/test_models.h"
#include "tests/support/verification_check.h"

namespace inferscope {
namespace {

class Verification : public ::testing::TestWithParam<std::string> {};

TEST_P(Verification, DraftedTokensVerifyAsTheyDecode) {
  auto model = testing::load_test_model(GetParam());
  ASSERT_TRUE(model);
  const int32_t n_vocab = static_cast<int32_t>(model->config().n_vocab);
  const std::vector<int32_t> prompt = model->tokenizer().encode("Once upon a time", true, false);
  std::vector<int32_t> drafted;
  for (int32_t i = 0; i < 20; ++i) drafted.push_back(1 + (i * 37 + 11) % (n_vocab - 1));
  testing::SimdLevelGuard guard;
  std::vector<kernels::SimdLevel> levels = testing::vector_simd_levels();
  levels.insert(levels.begin(), kernels::SimdLevel::Scalar);
  for (kernels::SimdLevel level : levels) {
    kernels::set_simd_level(level);
    auto session = testing::open_test_session(model, 128);
    ASSERT_TRUE(session);
    for (size_t length : {size_t{1}, size_t{5}, size_t{9}, size_t{20}}) {
      const auto check = testing::check_verification(session->executor(), prompt, std::span(drafted).first(length), 7);
      const std::string where = std::string(kernels::simd_level_name(level)) + ", " + std::to_string(length) + " drafted";
      ASSERT_EQ(check.error, "") << where;
      EXPECT_EQ(check.first_different, -1) << where;
      EXPECT_TRUE(check.kv_rows_identical) << where;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, Verification,
                         ::testing::Values("quant/q4_0.gguf", "quant/q8_0.gguf", "quant/q5_1.gguf", "quant/iq4_nl.gguf",
                                           "quant/q4_k_m.gguf", "quant/q3_k.gguf", "quant/tq1_0.gguf",
                                           "quant/f16.gguf", "quant/bf16.gguf", "stories260K.gguf",
                                           "derived/stories260K-moe4-distinct.gguf",
                                           "derived/stories260K-qwen2moe.gguf"),
                         [](const auto& info) { return testing::case_name(info.param); });

}  // namespace
}  // namespace inferscope
