// Thread adaptation must not change what the model computes: the logits with 1, 2 or 3 of a
// pool's threads active are bit-identical, in prefill and in decode (one token per forward call),
// at every SIMD level, for weight types whose kernels tile rows differently, and for a model whose
// feed-forward width (172) is no multiple of the 16-row split granule.
#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <string>
#include <vector>

#include "engine/runtime/session.h"
#include "kernels/cpu/cpu_features.h"
#include "tests/support/simd_levels.h"
#include "tests/support/test_models.h"

namespace inferscope {
namespace {

// Every position's logits for `tokens` with `active` threads; max_batch 1 runs each token alone.
std::vector<float> logits_with(Session& session, int active, const std::vector<int32_t>& tokens) {
  session.pool().set_active_threads(active);
  std::vector<float> logits;
  EXPECT_TRUE(session.evaluate(tokens, logits));
  return logits;
}

bool bit_identical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class ActiveThreadsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ActiveThreadsTest, LogitsAreBitIdenticalWhateverTheActiveThreads) {
  auto model = testing::load_test_model(GetParam());
  ASSERT_TRUE(model);
  std::vector<int32_t> tokens;
  for (int32_t i = 0; i < 40; ++i) tokens.push_back(1 + (i * 37) % 300);
  testing::SimdLevelGuard guard;
  for (kernels::SimdLevel level : testing::vector_simd_levels()) {
    kernels::set_simd_level(level);
    for (int64_t max_batch : {int64_t{256}, int64_t{1}}) {
      SessionOptions so;
      so.n_ctx = 64;
      so.n_threads = 3;
      so.max_batch = max_batch;
      auto session = Session::create(model, so);
      ASSERT_TRUE(session) << session.message();
      const std::vector<float> one = logits_with(**session, 1, tokens);
      const std::string where = GetParam() + " at " + kernels::simd_level_name(level) + ", max_batch " +
                                std::to_string(max_batch);
      EXPECT_TRUE(bit_identical(one, logits_with(**session, 2, tokens))) << where << ": 2 threads";
      EXPECT_TRUE(bit_identical(one, logits_with(**session, 3, tokens))) << where << ": 3 threads";
    }
  }
}

// What runs beside a session (the semantic cache's embedder, the server's) takes its threads
// setting: 0 when automatic (the pool adapts), else the fixed count.
TEST(SessionThreads, TheSettingIsZeroWhenAutomatic) {
  auto model = testing::load_test_model("stories260K.gguf");
  ASSERT_TRUE(model);
  for (int threads : {0, 1, 2}) {
    SessionOptions so;
    so.n_threads = threads;
    auto session = Session::create(model, so);
    ASSERT_TRUE(session) << session.message();
    EXPECT_EQ((*session)->thread_setting(), threads);
    EXPECT_EQ((*session)->pool().adaptive(), threads == 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ActiveThreadsTest,
                         ::testing::Values("stories260K.gguf", "quant/q4_0.gguf", "quant/q4_k_m.gguf",
                                           "quant/f16.gguf", "derived/stories260K-moe4-distinct.gguf"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace inferscope
