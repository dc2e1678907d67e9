// ForwardExecutor::verify on the CUDA backend (the emulator here, the device in the _gpu build):
// drafted tokens verified in one batch-invariant chunk give the logits of decoding them one
// forward call at a time to the last bit, and leave the same KV rows, for drafts of one row,
// of a decode-shaped chunk (graph-captured) and of more rows than one GEMV launch takes, where
// a plain chunk would run cuBLAS and the prefill attention plan.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine/backend/cuda/cuda_matmul.h"
#include "tests/cuda/ops/backend_setup.h"
#include "tests/support/logit_comparison.h"
#include "tests/support/test_models.h"
#include "tests/support/verification_check.h"

namespace inferscope::cuda_test {
namespace {

using kernels::GgmlType;

std::vector<int32_t> drafted_tokens(int64_t n_vocab) {
  std::vector<int32_t> drafted;
  for (int32_t i = 0; i < 12; ++i) drafted.push_back(1 + (i * 37 + 11) % static_cast<int32_t>(n_vocab - 1));
  return drafted;
}

TEST(CudaVerification, ProductsOfAnyRowCountRunTheGemv) {
  using cuda::MatmulPath;
  using cuda::RowBatching;
  EXPECT_EQ(cuda::matmul_path(GgmlType::Q4_K, 256, 9, RowBatching::Invariant), MatmulPath::MatvecInt8);
  EXPECT_EQ(cuda::matmul_path(GgmlType::F16, 256, 64, RowBatching::Invariant), MatmulPath::Matvec);
  EXPECT_EQ(cuda::matmul_path(GgmlType::F16, 256, 9, RowBatching::Fastest), MatmulPath::CublasF16);
}

// check_verification for drafts of 1, 5 (one GEMV launch, graph-captured), 9 and 12 tokens after
// `prompt` (empty: "Once upon a time").
void expect_verified_as_decoded(const std::string& file, int64_t n_ctx, std::vector<int32_t> prompt = {}) {
  auto model = testing::load_test_model(file);
  ASSERT_TRUE(model);
  auto fp = cuda_forward(model, small_forward(n_ctx));
  ASSERT_TRUE(fp) << fp.message();
  if (prompt.empty()) prompt = model->tokenizer().encode("Once upon a time", true, false);
  const std::vector<int32_t> drafted = drafted_tokens(model->config().n_vocab);
  for (size_t length : {size_t{1}, size_t{5}, size_t{9}, size_t{12}}) {
    const auto check = testing::check_verification(**fp, prompt, std::span(drafted).first(length), 7);
    const std::string where = file + ", n_ctx " + std::to_string(n_ctx) + ", " + std::to_string(length) + " drafted";
    ASSERT_EQ(check.error, "") << where;
    EXPECT_EQ(check.first_different, -1) << where;
    EXPECT_TRUE(check.kv_rows_identical) << where;
  }
}

class CudaVerificationModel : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaVerificationModel, DraftedTokensVerifyAsTheyDecode) { expect_verified_as_decoded(GetParam(), 128); }

INSTANTIATE_TEST_SUITE_P(Models, CudaVerificationModel,
                         ::testing::Values("quant/q4_0.gguf", "quant/q4_k_m.gguf", "stories260K.gguf"),
                         [](const auto& info) { return testing::case_name(info.param); });

// A context of 2048 and a prompt of 300 tokens: a one-row decode step splits its attention
// (split-K) into 16 ranges of 128 positions, a plain chunk of 5 rows into 13 of 158 (its
// blocks fill the device sooner), one of 9 or 12 rows not at all (a prefill plan): the drafted
// rows' walks cross those boundaries.
TEST(CudaVerification, SplitAttentionOfALongerContext) {
  auto model = testing::load_test_model("stories260K.gguf");
  ASSERT_TRUE(model);
  expect_verified_as_decoded("stories260K.gguf", 2048, test_tokens(300, 11, model->config().n_vocab));
}

// A verification and a plain chunk of the same decode shape (rows, all with logits) at the same
// positions, again and again: each replays its own CUDA graph, never the other's, and every
// repetition gives the bits of the first.
TEST(CudaVerification, VerificationsAndPlainChunksReplayTheirOwnGraphs) {
  auto model = testing::load_test_model("stories260K.gguf");
  ASSERT_TRUE(model);
  auto fp = cuda_forward(model, small_forward(128));
  ASSERT_TRUE(fp) << fp.message();
  ForwardExecutor& ex = **fp;
  const int64_t n_vocab = model->config().n_vocab;
  const std::vector<int32_t> prompt = model->tokenizer().encode("Once upon a time", true, false);
  const std::vector<int32_t> tokens = drafted_tokens(n_vocab);
  const std::span<const int32_t> drafted = std::span(tokens).first(5);
  std::vector<float> logits(prompt.size() * static_cast<size_t>(n_vocab));
  ASSERT_TRUE(ex.forward(0, prompt, true, logits.data()));
  const int64_t kept = ex.kv_length(0);
  const uint64_t launches = ex.counters().graph_launches;
  std::vector<float> first_plain, first_verified, out(drafted.size() * static_cast<size_t>(n_vocab));
  for (int round = 0; round < 6; ++round) {
    ASSERT_TRUE(ex.forward(0, drafted, true, out.data())) << round;
    if (round == 0) first_plain = out;
    EXPECT_EQ(std::memcmp(out.data(), first_plain.data(), out.size() * sizeof(float)), 0) << "plain, round " << round;
    ex.truncate(0, kept);
    ASSERT_TRUE(ex.verify(0, drafted, out.data())) << round;
    if (round == 0) first_verified = out;
    EXPECT_EQ(std::memcmp(out.data(), first_verified.data(), out.size() * sizeof(float)), 0)
        << "verified, round " << round;
    ex.truncate(0, kept);
  }
  // 12 decode-shaped chunks (13 with the prompt's), up to two timed (op by op), two captured,
  // the rest replayed (a graph launch each, as the captured ones).
  EXPECT_GE(ex.counters().graph_launches - launches, 8u);
}

}  // namespace
}  // namespace inferscope::cuda_test
