// Pruning: the row rules by hand (magnitude, Wanda's input-norm score, 2:4), whole files with
// the intended sparsity where Wanda beats magnitude on a trained model, and head pruning that
// removes a head whose output weights are zero without changing the logits.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "engine/runtime/session.h"
#include "engine/weightlab/head_pruning.h"
#include "engine/weightlab/pruning.h"
#include "engine/weightlab/weight_recipe.h"
#include "kernels/cpu/dequantize.h"
#include "tests/support/scratch_dir.h"
#include "tests/weightlab/mean_kl.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

TEST(PruneRow, MagnitudeZeroesTheSmallestMagnitudes) {
  std::vector<float> w = {0.5f, -0.1f, 0.3f, -0.9f, 0.05f, 0.2f};
  prune_row(PruneRule::Magnitude, w.data(), 6, nullptr, 0.5);
  EXPECT_EQ(w, (std::vector<float>{0.5f, 0.0f, 0.3f, -0.9f, 0.0f, 0.0f}));
}

TEST(PruneRow, WandaWeighsByTheInputNorm) {
  std::vector<float> w = {0.5f, -0.1f, 0.3f, -0.9f};
  const std::vector<float> norms = {0.1f, 10.0f, 1.0f, 0.1f};  // scores 0.05, 1.0, 0.3, 0.09
  prune_row(PruneRule::Wanda, w.data(), 4, norms.data(), 0.5);
  EXPECT_EQ(w, (std::vector<float>{0.0f, -0.1f, 0.3f, 0.0f}));
}

TEST(PruneRow, TwoFourKeepsTheTwoLargestOfEveryFour) {
  std::vector<float> w = {0.1f, -0.4f, 0.3f, 0.2f, -1.0f, 0.0f, 0.5f, -0.6f};
  prune_row(PruneRule::TwoFour, w.data(), 8, nullptr, 0.0);
  EXPECT_EQ(w, (std::vector<float>{0.0f, -0.4f, 0.3f, 0.0f, -1.0f, 0.0f, 0.0f, -0.6f}));
}

double zero_fraction(const gguf::TensorInfo& t) {
  const int64_t cols = t.ne[0], rows = static_cast<int64_t>(t.n_elements) / cols;
  std::vector<float> row(static_cast<size_t>(cols));
  int64_t zeros = 0;
  for (int64_t r = 0; r < rows; ++r) {
    kernels::dequantize_row(t.type, t.data + r * t.row_bytes, row.data(), cols);
    for (float v : row) zeros += v == 0.0f ? 1 : 0;
  }
  return static_cast<double>(zeros) / static_cast<double>(rows * cols);
}

TEST(PrunedModels, HalfOfEveryLinearLayerIsZeroAndWandaBeatsMagnitude) {
  const std::string source = testing::testdata("stories260K.gguf");
  const auto dir = testing::scratch_dir("pruned");
  const std::string magnitude = (dir / "magnitude.gguf").string(), wanda = (dir / "wanda.gguf").string();
  ASSERT_TRUE(save_model_as(source, "f32+magnitude", magnitude, 2));
  ASSERT_TRUE(save_model_as(source, "f32+wanda", wanda, 2));
  auto file = gguf::File::open(wanda);
  ASSERT_TRUE(file);
  int pruned = 0;
  for (const gguf::TensorInfo& t : (*file)->tensors()) {
    if (is_prunable_tensor(t.name, t.n_dims)) {
      EXPECT_NEAR(zero_fraction(t), 0.5, 0.01) << t.name;
      ++pruned;
    } else if (t.name == "token_embd.weight") {
      EXPECT_LT(zero_fraction(t), 0.01);
    }
  }
  EXPECT_EQ(pruned, 5 * 7);
  EXPECT_LT(testing::mean_kl(source, wanda), testing::mean_kl(source, magnitude));
}

TEST(PrunedModels, TwoFourCompressedRunsLikeTwoFourDense) {
  const std::string source = testing::testdata("stories260K.gguf");
  const auto dir = testing::scratch_dir("sparse24");
  const std::string dense = (dir / "dense.gguf").string(), compressed = (dir / "compressed.gguf").string();
  ASSERT_TRUE(save_model_as(source, "f16+2:4", dense, 2));
  ASSERT_TRUE(save_model_as(source, "f16_2of4+2:4", compressed, 2));
  auto file = gguf::File::open(compressed);
  ASSERT_TRUE(file);
  EXPECT_EQ((*file)->find_tensor("blk.0.attn_q.weight")->type, kernels::GgmlType::F16_2OF4);
  EXPECT_EQ((*file)->find_tensor("token_embd.weight")->type, kernels::GgmlType::F16);
  EXPECT_LT(std::filesystem::file_size(compressed), std::filesystem::file_size(dense));
  // The same pruned weights: the same next-token distributions (summation order aside).
  EXPECT_LT(testing::mean_kl(dense, compressed), 1e-4);  // pruning itself costs ~3 nats here
}

// stories260K with the output columns of KV group `group` (query heads 2g, 2g+1) zeroed in
// every layer, written as F32.
std::string with_silent_group(const std::string& source, int group, const std::string& out) {
  auto file = gguf::File::open(source);
  EXPECT_TRUE(file);
  gguf::Writer w;
  w.copy_metadata(**file, "");
  std::vector<std::vector<float>> keep;
  keep.reserve((*file)->tensors().size());
  for (const gguf::TensorInfo& t : (*file)->tensors()) {
    if (t.name.find("attn_output.weight") == std::string::npos) {
      w.add_tensor_copy(*file, t);
      continue;
    }
    const int64_t cols = t.ne[0], rows = t.ne[1], head_dim = 8;
    std::vector<float> m(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r) kernels::dequantize_row(t.type, t.data + r * t.row_bytes, m.data() + r * cols, cols);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 2 * group * head_dim; c < 2 * (group + 1) * head_dim; ++c) m[static_cast<size_t>(r * cols + c)] = 0.0f;
    }
    keep.push_back(std::move(m));
    const std::vector<float>& data = keep.back();
    w.add_tensor(t.name, {cols, rows}, kernels::GgmlType::F32,
                 std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(data.data()),
                                      reinterpret_cast<const uint8_t*>(data.data() + data.size())));
  }
  EXPECT_TRUE(w.write(out));
  return out;
}

std::vector<float> logits_of(const std::string& path, const std::vector<int32_t>& tokens) {
  auto model = Model::load(path);
  EXPECT_TRUE(model) << model.message();
  SessionOptions so;
  so.n_threads = 2;
  auto session = Session::create(*model, so);
  EXPECT_TRUE(session);
  std::vector<float> logits;
  EXPECT_TRUE((*session)->evaluate(tokens, logits));
  return logits;
}

TEST(HeadPruning, RemovingAHeadWithZeroOutputWeightsLeavesTheLogits) {
  const auto dir = testing::scratch_dir("heads");
  const std::string silent = with_silent_group(testing::testdata("stories260K.gguf"), 2, (dir / "silent.gguf").string());
  auto file = gguf::File::open(silent);
  ASSERT_TRUE(file);
  auto model = Model::load(silent);
  ASSERT_TRUE(model);
  auto calibration = collect_calibration(*model, default_calibration_text(), CalibrationOptions{256, 128, 2});
  ASSERT_TRUE(calibration) << calibration.message();
  auto pruned = prune_heads(*file, *calibration, 2);
  ASSERT_TRUE(pruned) << pruned.message();
  for (const auto& removed : pruned->removed) EXPECT_EQ(removed, std::vector<int>{2});
  EXPECT_EQ(pruned->heads_after, 6);
  EXPECT_EQ(pruned->kv_heads_after, 3);
  const std::string out = (dir / "pruned.gguf").string();
  ASSERT_TRUE(pruned->writer.write(out));

  const std::vector<int32_t> tokens = (*model)->tokenizer().encode("Once upon a time, a little bird", true, false);
  const std::vector<float> a = logits_of(silent, tokens), b = logits_of(out, tokens);
  ASSERT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, static_cast<double>(std::fabs(a[i] - b[i])));
  EXPECT_LT(worst, 1e-4);
  auto smaller = Model::load(out);
  ASSERT_TRUE(smaller);
  EXPECT_EQ((*smaller)->config().n_head, 6);
}

TEST(HeadPruning, CountsThatAreNotWholeGroupsAreRefused) {
  auto file = gguf::File::open(testing::testdata("stories260K.gguf"));
  ASSERT_TRUE(file);
  Calibration none;
  auto pruned = prune_heads(*file, none, 3);
  ASSERT_FALSE(pruned);
  EXPECT_NE(pruned.message().find("multiple of 2"), std::string::npos) << pruned.message();
}

}  // namespace
}  // namespace inferscope
