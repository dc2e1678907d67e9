// The weight lab on whole models, judged by the quality report on the shipped held-out text:
// GPTQ and AWQ at 4 bits give a lower KL divergence from the source than round-to-nearest in
// the same type (stories260K, trained; the quant/ base model, random), the KL order
// 8-bit < 4-bit < ternary holds, every method's file loads, and the method is recorded in the
// file's metadata.
#include <gtest/gtest.h>

#include <string>

#include "engine/compare/quality_report.h"
#include "engine/gguf/gguf_file.h"
#include "engine/model/quantize_model.h"
#include "engine/weightlab/weight_method.h"
#include "engine/weightlab/weight_recipe.h"
#include "tests/support/scratch_dir.h"
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

double mean_kl(const std::string& source, const std::string& converted) {
  QualityReportOptions o;
  o.reference = source;
  o.candidate = converted;
  o.n_threads = 2;
  o.reps = 1;
  o.max_tokens = 4;
  auto r = evaluate_models(o);
  EXPECT_TRUE(r) << r.message();
  return r ? r->mean_kl : 1e9;
}

struct Case {
  const char* model;
  const char* type;
};

class CalibratedMethods : public ::testing::TestWithParam<Case> {};

TEST_P(CalibratedMethods, GptqAndAwqBeatRoundToNearestInTheSameType) {
  const std::string source = testing::testdata(GetParam().model);
  const std::string type = GetParam().type;
  const double rtn = mean_kl(source, convert(source, type, "rtn"));
  const double gptq = mean_kl(source, convert(source, type + "+gptq", "gptq"));
  const double awq = mean_kl(source, convert(source, type + "+awq", "awq"));
  EXPECT_LT(gptq, rtn) << "GPTQ " << gptq << ", RTN " << rtn;
  EXPECT_LT(awq, rtn) << "AWQ " << awq << ", RTN " << rtn;
}

INSTANTIATE_TEST_SUITE_P(Models, CalibratedMethods,
                         ::testing::Values(Case{"stories260K.gguf", "q4_0"}, Case{"quant/base-f32.gguf", "q4_0"},
                                           Case{"quant/base-f32.gguf", "q4_k_m"}),
                         [](const auto& info) {
                           return std::string(info.param.model[0] == 's' ? "stories260K_" : "base_") + info.param.type;
                         });

TEST(WeightLabOrder, EightBitsBelowFourBitsBelowTernary) {
  const std::string source = testing::testdata("quant/base-f32.gguf");
  const double q8 = mean_kl(source, convert(source, "q8_0", "q8"));
  const double q4 = mean_kl(source, convert(source, "q4_0", "q4"));
  const double ternary = mean_kl(source, convert(source, "tq2_0+ternary", "ternary"));
  EXPECT_LT(0.0, q8);
  EXPECT_LT(q8, q4);
  EXPECT_LT(q4, ternary);
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
  for (const char* r : kWeightLabRecipes) EXPECT_TRUE(parse_weight_recipe(r)) << r;
}

TEST(WeightRecipes, LoadOnTheFlyNamesTheMethod) {
  const std::string source = testing::testdata("stories260K.gguf");
  auto model = load_model_as(source, "q4_0+gptq", {}, 2);
  ASSERT_TRUE(model) << model.message();
  EXPECT_EQ((*model)->file().path(), source + " as Q4_0 (GPTQ)");
}

}  // namespace
}  // namespace inferscope
