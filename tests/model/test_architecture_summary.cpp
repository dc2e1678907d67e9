// engine/model/architecture_summary on the 2026 presets: the rows `inspect` and the app's model
// information show say what is particular to each architecture (window pattern, q/k norms and
// their span, where the norms sit, sinks).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "engine/gguf/gguf_file.h"
#include "engine/model/architecture_summary.h"
#include "engine/model/model_config.h"
#include "engine/model/random_model.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

std::map<std::string, std::string> rows_of(const std::string& preset) {
  RandomModelSpec spec;
  EXPECT_TRUE(random_model_preset(preset, &spec.shape));
  spec.mix = *quant_mix_from_name("f32");
  spec.vocab_path = testing::testdata("stories260K.gguf");
  const std::string path = (testing::scratch_dir("summary-" + preset) / "m.gguf").string();
  EXPECT_TRUE(write_random_model(spec, path));
  auto file = gguf::File::open(path);
  EXPECT_TRUE(file) << file.message();
  auto config = ModelConfig::from_gguf(**file);
  EXPECT_TRUE(config) << config.message();
  std::map<std::string, std::string> rows;
  for (const auto& [label, value] : architecture_summary(*config)) rows[label] = value;
  return rows;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(ArchitectureSummary, SaysWhatIsParticularToEachArchitecture) {
  auto olmo2 = rows_of("olmo2-tiny");
  EXPECT_TRUE(has(olmo2["Norms"], "after attention and the FFN only")) << olmo2["Norms"];
  EXPECT_TRUE(has(olmo2["Attention"], "q/k norms over all heads")) << olmo2["Attention"];
  auto olmo3 = rows_of("olmo3-tiny");
  EXPECT_TRUE(has(olmo3["Attention"], "on 3 of every 4 layers")) << olmo3["Attention"];
  auto qwen3 = rows_of("qwen3-tiny");
  EXPECT_TRUE(has(qwen3["Attention"], "q/k norms") && !has(qwen3["Attention"], "all heads")) << qwen3["Attention"];
  auto gemma3 = rows_of("gemma3-tiny");
  EXPECT_TRUE(has(gemma3["Norms"], "before and after")) << gemma3["Norms"];
  EXPECT_TRUE(has(gemma3["Attention"], "on 5 of every 6 layers")) << gemma3["Attention"];
  auto gpt_oss = rows_of("gpt-oss-tiny");
  EXPECT_TRUE(has(gpt_oss["Attention"], "learned sinks")) << gpt_oss["Attention"];
}

}  // namespace
}  // namespace inferscope
