// AWQ: on a layer whose input has a few large channels, the chosen scales reduce the quantized
// layer's output error against alpha = 0 (plain rounding); and the scales folded into a whole
// model (norms, ffn_up's rows) leave its F32 forward unchanged.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "engine/core/thread_pool.h"
#include "engine/gguf/gguf_file.h"
#include "engine/model/quantize_model.h"
#include "engine/runtime/session.h"
#include "engine/weightlab/awq.h"
#include "engine/weightlab/awq_rewriter.h"
#include "engine/weightlab/weight_method.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

TEST(Awq, ChosenScalesReduceTheOutputErrorOfPlainRounding) {
  ThreadPool pool(2);
  constexpr int64_t cols = 128, tokens = 200, rows = 32;
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  CalibrationInput input{cols, std::vector<float>(tokens * cols)};
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t c = 0; c < cols; ++c) input.rows[t * cols + c] = dist(rng) * (c % 16 == 3 ? 20.0f : 1.0f);
  }
  AwqMatrix m;
  m.type = kernels::GgmlType::Q4_0;
  for (int64_t i = 0; i < rows * cols; ++i) m.rows.push_back(0.02f * dist(rng));
  const AwqChoice c = awq_search(input, {m}, AwqOptions{}, pool);
  EXPECT_GT(c.alpha, 0.0);
  EXPECT_LT(c.error, 0.8 * c.error_plain) << "alpha " << c.alpha;
  // The salient channels get the largest scales.
  EXPECT_GT(c.scales[3], c.scales[4]);
}

std::vector<float> first_logits(const std::string& path, const std::vector<int32_t>& prompt) {
  auto model = Model::load(path);
  EXPECT_TRUE(model) << model.message();
  SessionOptions so;
  so.n_threads = 2;
  auto session = Session::create(*model, so);
  EXPECT_TRUE(session) << session.message();
  std::vector<float> logits;
  EXPECT_TRUE((*session)->evaluate(prompt, logits));
  return logits;
}

TEST(Awq, FoldedScalesLeaveTheF32ForwardUnchanged) {
  const std::string source = testing::testdata("stories260K.gguf");
  const auto dir = testing::scratch_dir("awq");
  auto file = gguf::File::open(source);
  ASSERT_TRUE(file);
  // The scales AWQ chooses for Q4_0, written without quantizing (F32).
  auto model = Model::load(source);
  ASSERT_TRUE(model);
  CalibrationOptions co;
  co.n_threads = 2;
  auto calibration = collect_calibration(*model, default_calibration_text(), co);
  ASSERT_TRUE(calibration) << calibration.message();
  ThreadPool pool(2);
  auto awq = AwqRewriter::search(**file, *calibration, quant_mix_from_name("q4_0", true).value(), AwqOptions{}, pool);
  ASSERT_TRUE(awq);
  int scaled = 0;
  for (const AwqGroupChoice& c : (*awq)->choices()) scaled += c.alpha > 0 ? 1 : 0;
  ASSERT_GT(scaled, 0) << "no group chose scales: nothing would be folded";
  const std::string folded = (dir / "folded-f32.gguf").string();
  ASSERT_TRUE(quantize_model(source, folded, QuantizeOptions{quant_mix_from_name("f32").value(), 2, *awq}));

  const std::vector<int32_t> prompt = (*model)->tokenizer().encode("Once upon a time, a girl", true, false);
  const std::vector<float> a = first_logits(source, prompt);
  const std::vector<float> b = first_logits(folded, prompt);
  ASSERT_EQ(a.size(), b.size());
  double worst = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, static_cast<double>(std::fabs(a[i] - b[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(a[i])));
  }
  EXPECT_LT(worst, 1e-4 * scale);
}

}  // namespace
}  // namespace inferscope
