// The weight lab from the command line: quantize --method with its JSON quality report, the
// evaluate command, and clear errors for a bad method or a method that does not fit the type.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/weightlab/imatrix_file.h"

#include "tests/support/cli_runner.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

using testing::quoted;

// imatrix writes a file the reader takes back, with an entry per block matrix of the bundled
// model (5 blocks x 7 matrices) and the chunks it counted; a text shorter than a chunk is refused.
TEST(CliWeightLab, ImatrixWritesTheReferenceFormat) {
  const auto dir = testing::scratch_dir("cli-imatrix");
  const std::string text = (dir / "calibration.txt").string();
  std::string story;
  for (int i = 0; i < 6; ++i) story += "Once upon a time, there was a little girl named Lily. She loved to play outside. ";
  std::ofstream(text) << story;
  const std::string out = (dir / "s.imatrix").string();
  auto run = testing::run_cli("imatrix --chunk-size 32 --threads 2 --text " + quoted(text) + " --output " + quoted(out));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("chunks"), std::string::npos) << "the progress bar: " << run.err;
  auto im = read_imatrix(out);
  ASSERT_TRUE(im) << im.message();
  EXPECT_EQ(im->entries.size(), 35u);
  EXPECT_EQ(im->chunk_size, 32);
  EXPECT_GE(im->chunk_count, 3);
  EXPECT_EQ(im->entries.at("blk.4.ffn_down.weight").counts, std::vector<float>{32.0f * im->chunk_count});
  EXPECT_EQ(im->datasets, std::vector<std::string>{"calibration.txt"});

  std::ofstream(text) << "Once upon a time";
  run = testing::run_cli("imatrix --text " + quoted(text) + " --output " + quoted(out));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("fewer than one chunk"), std::string::npos) << run.err;
}

TEST(CliWeightLab, QuantizeWithGptqReportsQualityAsJson) {
  const std::string source = testing::testdata("stories260K.gguf");
  const std::string out = (testing::scratch_dir("gptq") / "s-gptq.gguf").string();
  const auto run = testing::run_cli("quantize --model " + quoted(source) + " --output " + quoted(out) +
                                    " --type q4_0 --pure --method gptq --act-order --threads 2 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  for (const char* key : {"mean_kl", "top1_agreement", "perplexity", "source_perplexity", "file_bytes"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_GT(j["mean_kl"].get<double>(), 0.0);
  EXPECT_LT(j["mean_kl"].get<double>(), 1.0);
  EXPECT_LT(j["file_bytes"].get<double>(), j["source_file_bytes"].get<double>());
  EXPECT_NE(run.err.find("calibration: "), std::string::npos) << run.err;  // the plan goes to stderr
}

TEST(CliWeightLab, EvaluateComparesTwoFiles) {
  const std::string source = testing::testdata("quant/base-f32.gguf");
  const auto run = testing::run_cli("evaluate --model " + quoted(testing::testdata("quant/q8_0.gguf")) +
                                    " --reference " + quoted(source) + " --reps 1 --threads 2");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("mean KL"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("top-1 agreement"), std::string::npos) << run.out;
}

TEST(CliWeightLab, BadMethodsAreRefusedClearly) {
  const std::string source = testing::testdata("stories260K.gguf");
  const std::string out = (testing::scratch_dir("bad") / "x.gguf").string();
  auto run = testing::run_cli("quantize --model " + quoted(source) + " --output " + quoted(out) +
                              " --type q4_0 --method magic");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("unknown --method 'magic'"), std::string::npos) << run.err;
  run = testing::run_cli("quantize --model " + quoted(source) + " --output " + quoted(out) +
                         " --type q6_k --method gptq");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("gptq cannot place weights"), std::string::npos) << run.err;
  run = testing::run_cli("evaluate --model " + quoted(source));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--reference FILE is required"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace inferscope
