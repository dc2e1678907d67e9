// The weight lab on whole models, judged by the quality report on the shipped held-out text:
// GPTQ and AWQ at 4 bits give a lower KL divergence from the source than round-to-nearest in
// the same type (stories260K, trained; the quant/ base model, random), the KL order
// 8-bit < 4-bit < ternary holds, every method's file loads, and the method is recorded in the
// file's metadata. GPTQ and AWQ also beat it on a third text, neither calibration nor evaluation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "engine/model/model.h"
#include "engine/model/quantize_model.h"
#include "engine/weightlab/llm_int8_method.h"
#include "engine/weightlab/weight_method.h"
#include "engine/weightlab/weight_recipe.h"
#include "tests/support/scratch_dir.h"
#include "tests/weightlab/mean_kl.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

// Converts `source` by `recipe` into the test's scratch folder; returns the file's path.
std::string convert(const std::string& source, const std::string& recipe, const std::string& name) {
  const std::string out = (testing::scratch_dir(name) / (name + ".gguf")).string();
  const Status st = save_model_as(source, recipe, out, 2);
  EXPECT_TRUE(st) << recipe << ": " << st.message();
  return out;
}

struct Case {
  const char* model;
  const char* type;
};

class CalibratedMethods : public ::testing::TestWithParam<Case> {};

TEST_P(CalibratedMethods, GptqAndAwqBeatRoundToNearestInTheSameType) {
  const std::string source = testing::testdata(GetParam().model);
  const std::string type = GetParam().type;
  const double rtn = testing::mean_kl(source, convert(source, type, "rtn"));
  const double gptq = testing::mean_kl(source, convert(source, type + "+gptq", "gptq"));
  const double awq = testing::mean_kl(source, convert(source, type + "+awq", "awq"));
  EXPECT_LT(gptq, rtn) << "GPTQ " << gptq << ", RTN " << rtn;
  EXPECT_LT(awq, rtn) << "AWQ " << awq << ", RTN " << rtn;
}

INSTANTIATE_TEST_SUITE_P(Models, CalibratedMethods,
                         ::testing::Values(Case{"stories260K.gguf", "q4_0"}, Case{"quant/base-f32.gguf", "q4_0"},
                                           Case{"quant/base-f32.gguf", "q4_k_m"}),
                         [](const auto& info) {
                           return std::string(info.param.model[0] == 's' ? "stories260K_" : "base_") + info.param.type;
                         });

// A text that is neither the calibration text nor the shipped evaluation text
// (tests/data/texts/heldout-stories.txt, written for this test): AWQ's scales, judged on a
// held-back part of the calibration text, still beat plain rounding there, as GPTQ does.
TEST(CalibratedMethodsOnAnotherText, AwqAndGptqStillBeatRoundToNearest) {
  const std::string source = testing::testdata("stories260K.gguf");
  std::ifstream in(std::string(INFERSCOPE_SOURCE_DIR) + "/tests/data/texts/heldout-stories.txt");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(text.size(), 1000u);
  const double rtn = testing::mean_kl(source, convert(source, "q4_0", "rtn"), text);
  const double gptq = testing::mean_kl(source, convert(source, "q4_0+gptq", "gptq"), text);
  const double awq = testing::mean_kl(source, convert(source, "q4_0+awq", "awq"), text);
  std::printf("stories260K q4_0 on the other text: mean KL RTN %.4f, AWQ %.4f, GPTQ %.4f\n", rtn, awq, gptq);
  EXPECT_LT(gptq, rtn) << "GPTQ " << gptq << ", RTN " << rtn;
  EXPECT_LT(awq, rtn) << "AWQ " << awq << ", RTN " << rtn;
}

TEST(WeightLabOrder, Int8BelowFourBitsBelowTernary) {
  const std::string source = testing::testdata("quant/base-f32.gguf");
  const double int8 = testing::mean_kl(source, convert(source, "int8", "int8"));
  const double q4 = testing::mean_kl(source, convert(source, "q4_0", "q4"));
  const double ternary = testing::mean_kl(source, convert(source, "tq2_0+ternary", "ternary"));
  EXPECT_LT(0.0, int8);
  EXPECT_LT(int8, q4);
  EXPECT_LT(q4, ternary);
}

TEST(Int8PerChannel, EveryMatrixIsI8WithItsRowScales) {
  const std::string source = testing::testdata("quant/base-f32.gguf");
  auto file = gguf::File::open(convert(source, "int8", "int8"));
  ASSERT_TRUE(file) << file.message();
  int matrices = 0;
  for (const gguf::TensorInfo& t : (*file)->tensors()) {
    if (t.type != kernels::GgmlType::I8) continue;
    ++matrices;
    const gguf::TensorInfo* scale = (*file)->find_tensor(t.name + ".scale");
    ASSERT_NE(scale, nullptr) << t.name;
    EXPECT_EQ(scale->type, kernels::GgmlType::F32);
    EXPECT_EQ(scale->n_elements, t.n_elements / static_cast<uint64_t>(t.ne[0]));
    // weight = scale * q, symmetric: |q| <= 127, and 127 reached in the first row.
    const auto* q = reinterpret_cast<const int8_t*>(t.data);
    EXPECT_GE(*std::min_element(q, q + t.n_elements), -127) << t.name;
    int max_abs = 0;
    for (int64_t i = 0; i < t.ne[0]; ++i) max_abs = std::max(max_abs, std::abs(static_cast<int>(q[i])));
    EXPECT_EQ(max_abs, 127) << t.name;
  }
  EXPECT_EQ(matrices, 9);  // token_embd, output and the layer's seven
  auto model = Model::load((*file)->path());
  ASSERT_TRUE(model) << model.message();
  EXPECT_EQ((*model)->weights().layers[0].wq.type, kernels::GgmlType::Q8_0);  // re-blocked in memory
}

TEST(LlmInt8Model, RunsOnTheCpuAndCountsOutlierColumnsPerLayer) {
  const std::string source = testing::testdata("stories260K.gguf");
  const std::string path = convert(source, "int8+llm-int8", "llm-int8");
  auto model = Model::load(path);
  ASSERT_TRUE(model) << model.message();
  EXPECT_FLOAT_EQ((*model)->weights().llm_int8_threshold, 6.0f);
  const double kl = testing::mean_kl(source, path);
  EXPECT_LT(kl, 0.01);  // int8 with the outliers in F16: close to the F32 model
  auto fractions = llm_int8_outlier_fractions(path, default_eval_text(), 2);
  ASSERT_TRUE(fractions) << fractions.message();
  ASSERT_EQ(fractions->size(), 5u);
  double most = 0;
  for (double f : *fractions) most = std::max(most, f);
  EXPECT_GT(most, 0.0);  // this trained model has activations above 6 in some layers
  EXPECT_LT(most, 0.2);
}

TEST(Int8PerChannel, AMissingScaleTensorIsAClearError) {
  const std::string source = testing::testdata("quant/base-f32.gguf");
  auto file = gguf::File::open(convert(source, "int8", "int8"));
  ASSERT_TRUE(file);
  gguf::Writer w;
  w.copy_metadata(**file, "");
  for (const gguf::TensorInfo& t : (*file)->tensors()) {
    if (t.name != "blk.0.attn_q.weight.scale") w.add_tensor_copy(*file, t);
  }
  const std::string broken = (testing::scratch_dir("broken") / "broken.gguf").string();
  ASSERT_TRUE(w.write(broken));
  auto model = Model::load(broken);
  ASSERT_FALSE(model);
  EXPECT_NE(model.message().find("needs an F32 tensor 'blk.0.attn_q.weight.scale'"), std::string::npos)
      << model.message();
}

TEST(WeightLabFiles, TheMethodIsInTheMetadataAndTheTypesAreStandard) {
  const std::string source = testing::testdata("quant/base-f32.gguf");
  auto file = gguf::File::open(convert(source, "q4_k_m+gptq", "gptq"));
  ASSERT_TRUE(file) << file.message();
  const gguf::Value* method = (*file)->find("inferscope.weightlab.method");
  ASSERT_NE(method, nullptr);
  EXPECT_EQ(method->string, "gptq");
  for (const gguf::TensorInfo& t : (*file)->tensors()) {
    if (t.name == "blk.0.attn_q.weight") EXPECT_EQ(t.type, kernels::GgmlType::Q4_K);
  }
}

TEST(WeightRecipes, ParseAndRefuse) {
  EXPECT_EQ(parse_weight_recipe("Q4_K_M+gptq")->text(), "q4_k_m+gptq");
  EXPECT_EQ(parse_weight_recipe("q8_0")->label(), "Q8_0");
  EXPECT_EQ(parse_weight_recipe("q4_0+awq")->label(), "Q4_0 · AWQ");
  EXPECT_FALSE(parse_weight_recipe("q4_0+magic"));
  EXPECT_FALSE(parse_weight_recipe("q4_0+ternary"));
  EXPECT_FALSE(parse_weight_recipe("q6_k+gptq"));
  EXPECT_EQ(parse_weight_recipe("IQ4_XS+imatrix")->label(), "IQ4_XS · IMATRIX");
  auto q4_0 = parse_weight_recipe("q4_0+imatrix");
  ASSERT_FALSE(q4_0);
  EXPECT_NE(q4_0.message().find("importance matrix weighs the K-quants"), std::string::npos) << q4_0.message();
  for (const char* r : kWeightLabRecipes) EXPECT_TRUE(parse_weight_recipe(r)) << r;
}

TEST(WeightRecipes, HeadsOnLoadAndSaved) {
  const std::string source = testing::testdata("stories260K.gguf");
  EXPECT_EQ(parse_weight_recipe("heads:1")->text(), "heads:1");
  EXPECT_FALSE(parse_weight_recipe("heads:0"));
  EXPECT_FALSE(parse_weight_recipe("heads:x"));
  auto model = load_model_as(source, "heads:1", {}, 2);
  ASSERT_TRUE(model) << model.message();
  EXPECT_EQ((*model)->config().n_head, 6);
  EXPECT_EQ((*model)->config().n_head_kv, 3);
  const std::string out = (testing::scratch_dir("heads") / "h.gguf").string();
  ASSERT_TRUE(save_model_as(source, "heads:1", out, 2));
  auto saved = Model::load(out);
  ASSERT_TRUE(saved) << saved.message();
  EXPECT_EQ((*saved)->config().n_head, 6);
}

TEST(WeightRecipes, LoadOnTheFlyNamesTheMethod) {
  const std::string source = testing::testdata("stories260K.gguf");
  auto model = load_model_as(source, "q4_0+gptq", {}, 2);
  ASSERT_TRUE(model) << model.message();
  EXPECT_EQ((*model)->file().path(), source + " as Q4_0 (GPTQ)");
}

}  // namespace
}  // namespace inferscope
