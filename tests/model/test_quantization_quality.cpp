// Our quantizers rank the K-quants the way their bit widths say: quantize the F32 master of
// testdata/quant to each type, run it and the master teacher-forced on the reference sequence
// (prompt + llama.cpp's greedy ids from base-f32.gguf.json), and require the mean
// KL(F32 || quantized) of the next-token distributions to grow strictly from Q8_0 to Q2_K.
// The quantized files run on their own matmul kernels when kernels::matmul_supported says so for
// every type; otherwise each is decoded back to an all-F32 file first (same weights, F32 kernels).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/model/quantize_model.h"
#include "engine/runtime/session.h"
#include "kernels/cpu/matmul.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"
#include "tests/support/distributions.h"

namespace inferscope {
namespace {

using kernels::GgmlType;

constexpr GgmlType kLadder[] = {GgmlType::Q8_0, GgmlType::Q6_K, GgmlType::Q5_K,
                                GgmlType::Q4_K, GgmlType::Q3_K, GgmlType::Q2_K};

// Logits of every position ([tokens][n_vocab]) and the vocabulary size.
std::vector<float> evaluate(const std::string& path, const std::vector<int32_t>& tokens, int64_t* n_vocab) {
  auto model = Model::load(path);
  EXPECT_TRUE(model) << model.message();
  if (!model) return {};
  SessionOptions so;
  so.n_ctx = 64;
  so.n_threads = 2;
  auto session = Session::create(*model, so);
  EXPECT_TRUE(session) << session.message();
  std::vector<float> logits;
  if (session) {
    EXPECT_TRUE((*session)->evaluate(tokens, logits));
  }
  *n_vocab = (*model)->config().n_vocab;
  return logits;
}

// Mean over positions of KL(p || q), p and q the softmax of each position's logits.
double mean_kl(const std::vector<float>& p_logits, const std::vector<float>& q_logits, int64_t n_vocab) {
  const size_t positions = p_logits.size() / static_cast<size_t>(n_vocab);
  double total = 0.0;
  for (size_t t = 0; t < positions; ++t) {
    total += testing::kl_divergence(p_logits.data() + t * n_vocab, q_logits.data() + t * n_vocab, n_vocab);
  }
  return total / static_cast<double>(positions);
}

QuantMix pure(GgmlType t) {
  const char* names[] = {"q8_0", "q6_k", "q5_k", "q4_k", "q3_k", "q2_k"};
  const size_t i = static_cast<size_t>(std::find(std::begin(kLadder), std::end(kLadder), t) - std::begin(kLadder));
  return quant_mix_from_name(names[i], true).value();
}

// Quantizes `master` to every ladder type (pure) and returns the mean KL of each against it.
std::vector<double> ladder_kl(const std::string& master, const std::string& scratch_name, bool* on_quantized_kernels) {
  const auto dir = testing::scratch_dir(scratch_name);
  const std::vector<int32_t> tokens = testing::quant_reference_tokens();
  int64_t n_vocab = 0;
  const std::vector<float> reference = evaluate(master, tokens, &n_vocab);
  *on_quantized_kernels = std::all_of(std::begin(kLadder), std::end(kLadder), kernels::matmul_supported);
  std::vector<double> kls;
  for (GgmlType t : kLadder) {
    const std::string quantized = (dir / (std::string(kernels::type_name(t)) + ".gguf")).string();
    Status st = quantize_model(master, quantized, QuantizeOptions{pure(t), 2, nullptr});
    EXPECT_TRUE(st) << st.message();
    std::string run_path = quantized;
    if (!*on_quantized_kernels) {
      run_path = (dir / (std::string(kernels::type_name(t)) + "-as-f32.gguf")).string();
      st = quantize_model(quantized, run_path, QuantizeOptions{quant_mix_from_name("f32").value(), 2, nullptr});
      EXPECT_TRUE(st) << st.message();
    }
    int64_t n = 0;
    const std::vector<float> logits = evaluate(run_path, tokens, &n);
    if (logits.size() != reference.size()) {
      ADD_FAILURE() << "no logits for " << kernels::type_name(t);
      return {};
    }
    kls.push_back(mean_kl(reference, logits, n_vocab));
  }
  return kls;
}

void print_ladder(const char* model, const std::vector<double>& kls, bool on_quantized_kernels) {
  std::printf("%s (%s): mean KL(F32 || quantized)", model,
              on_quantized_kernels ? "quantized kernels" : "weights decoded to F32");
  for (size_t i = 0; i < kls.size(); ++i) std::printf("  %s %.5f", kernels::type_name(kLadder[i]), kls[i]);
  std::printf("\n");
}

TEST(QuantizationQuality, KlDivergenceGrowsStrictlyFromQ8_0ToQ2_K) {
  bool on_quantized_kernels = false;
  const std::vector<double> kls =
      ladder_kl(testing::testdata("quant/base-f32.gguf"), "quality-base", &on_quantized_kernels);
  ASSERT_EQ(kls.size(), std::size(kLadder));
  print_ladder("base-f32", kls, on_quantized_kernels);
  for (size_t i = 1; i < kls.size(); ++i) {
    EXPECT_LT(kls[i - 1], kls[i]) << kernels::type_name(kLadder[i - 1]) << " vs " << kernels::type_name(kLadder[i]);
  }
}

// stories260K's 64- and 172-wide rows fit no K-quant: llama.cpp's fallbacks give Q8_0 for Q6_K,
// Q5_1 for Q5_K, Q5_0 for Q4_K and IQ4_NL for both Q3_K and Q2_K (F16 where 172 does not fit
// the 32-blocks). So the ladder can only be non-decreasing, with Q3_K and Q2_K identical.
TEST(QuantizationQuality, StoriesFallbacksKeepTheOrder) {
  bool on_quantized_kernels = false;
  const std::vector<double> kls =
      ladder_kl(testing::testdata("stories260K.gguf"), "quality-stories", &on_quantized_kernels);
  ASSERT_EQ(kls.size(), std::size(kLadder));
  print_ladder("stories260K", kls, on_quantized_kernels);
  EXPECT_EQ(kls[0], kls[1]);  // Q6_K -> Q8_0: the same file
  EXPECT_LT(kls[1], kls[2]);
  EXPECT_LT(kls[2], kls[3]);
  EXPECT_LT(kls[3], kls[4]);
  EXPECT_EQ(kls[4], kls[5]);  // both IQ4_NL
}

}  // namespace
}  // namespace inferscope
