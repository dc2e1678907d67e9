// inferscope-cli quantize end to end: the binary converts real files, `inspect --json` reads back
// the per-tensor types llama.cpp's rules give (quant/README.md for q4_k_m), and bad input fails
// with a message.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "tests/support/cli_runner.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

using testing::CliRun;
using testing::quoted;
using testing::run_cli;

// Quantizes `input` with `args` and returns inspect's tensor name -> type.
std::map<std::string, std::string> quantize_and_inspect(const std::string& input, const std::string& args,
                                                        const std::string& out) {
  CliRun q = run_cli("quantize --model " + quoted(input) + " --output " + quoted(out) + " --threads 2 " + args);
  EXPECT_EQ(q.exit_code, 0) << q.err;
  CliRun i = run_cli("inspect --json --model " + quoted(out));
  EXPECT_EQ(i.exit_code, 0) << i.err;
  std::map<std::string, std::string> types;
  if (i.exit_code != 0) return types;
  const auto j = nlohmann::json::parse(i.out);
  for (const auto& t : j["tensors"]) {
    types[t["name"].get<std::string>()] = t["type"].get<std::string>();
  }
  return types;
}

TEST(CliQuantize, BaseF32ToQ4KMHasLlamaCppTypes) {
  const auto out = (testing::scratch_dir("cli-quantize-q4km") / "q4_k_m.gguf").string();
  auto types = quantize_and_inspect(testing::testdata("quant/base-f32.gguf"), "--type q4_k_m", out);
  ASSERT_EQ(types.size(), 12u);
  for (const char* name : {"output.weight", "blk.0.attn_v.weight", "blk.0.ffn_down.weight"}) {
    EXPECT_EQ(types[name], "q6_K") << name;
  }
  for (const char* name : {"token_embd.weight", "blk.0.attn_q.weight", "blk.0.attn_k.weight",
                           "blk.0.attn_output.weight", "blk.0.ffn_gate.weight", "blk.0.ffn_up.weight"}) {
    EXPECT_EQ(types[name], "q4_K") << name;
  }
  for (const char* name : {"output_norm.weight", "blk.0.attn_norm.weight", "blk.0.ffn_norm.weight"}) {
    EXPECT_EQ(types[name], "f32") << name;
  }
}

TEST(CliQuantize, BaseF32PureTypes) {
  const auto dir = testing::scratch_dir("cli-quantize-pure");
  for (const char* type : {"q5_k", "q8_0", "iq4_nl"}) {
    const auto out = (dir / (std::string(type) + ".gguf")).string();
    auto types = quantize_and_inspect(testing::testdata("quant/base-f32.gguf"), std::string("--pure --type ") + type, out);
    const std::string expected = std::string(type) == "q5_k" ? "q5_K" : type;
    EXPECT_EQ(types["blk.0.ffn_up.weight"], expected);
    EXPECT_EQ(types["output.weight"], expected);
  }
}

// stories260K: 64-wide rows take llama.cpp's fallbacks (Q6_K -> Q8_0, Q4_K -> Q5_0), the 172-wide
// ffn_down rows fit no block type and become F16; the result still generates.
TEST(CliQuantize, StoriesQ4KMFallsBackAndRuns) {
  const auto out = (testing::scratch_dir("cli-quantize-stories") / "q4_k_m.gguf").string();
  auto types = quantize_and_inspect(testing::testdata("stories260K.gguf"), "--type q4_k_m", out);
  EXPECT_EQ(types["output.weight"], "q8_0");
  EXPECT_EQ(types["blk.0.attn_q.weight"], "q5_0");
  EXPECT_EQ(types["blk.0.ffn_down.weight"], "f16");
  EXPECT_EQ(types["blk.0.attn_norm.weight"], "f32");
  CliRun g = run_cli("generate --json --max-tokens 8 --temperature 0 --model " + quoted(out));
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_EQ(nlohmann::json::parse(g.out)["token_ids"].size(), 8u);
}

// make-model takes the same types: with 2 layers llama.cpp's "use more bits" rule selects only
// layer 1 (i >= 7n/8) for Q6_K attn_v / ffn_down.
TEST(CliQuantize, MakeModelWritesAQ4KMMix) {
  const auto out = (testing::scratch_dir("cli-quantize-make-model") / "mix.gguf").string();
  CliRun m = run_cli("make-model --output " + quoted(out) +
                  " --embd 256 --layers 2 --heads 4 --kv-heads 2 --ff 512 --context 64 --type q4_k_m");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  CliRun i = run_cli("inspect --json --model " + quoted(out));
  ASSERT_EQ(i.exit_code, 0) << i.err;
  const auto j = nlohmann::json::parse(i.out);
  std::map<std::string, std::string> types;
  for (const auto& t : j["tensors"]) types[t["name"].get<std::string>()] = t["type"].get<std::string>();
  EXPECT_EQ(types["output.weight"], "q6_K");
  EXPECT_EQ(types["token_embd.weight"], "q4_K");
  EXPECT_EQ(types["blk.0.attn_v.weight"], "q4_K");
  EXPECT_EQ(types["blk.1.attn_v.weight"], "q6_K");
  EXPECT_EQ(types["blk.0.ffn_down.weight"], "q4_K");
  EXPECT_EQ(types["blk.1.ffn_down.weight"], "q6_K");
  EXPECT_EQ(types["blk.1.ffn_norm.weight"], "f32");
  EXPECT_EQ(j["metadata"]["general.file_type"], "15");
}

TEST(CliQuantize, RequantizingWarns) {
  const auto out = (testing::scratch_dir("cli-quantize-requant") / "q4_0.gguf").string();
  CliRun q = run_cli("quantize --model " + quoted(testing::testdata("quant/q8_0.gguf")) + " --output " + quoted(out) +
                  " --type q4_0");
  ASSERT_EQ(q.exit_code, 0) << q.err;
  EXPECT_NE(q.err.find("warning"), std::string::npos) << q.err;
}

TEST(CliQuantize, ErrorsForBadTypeMissingFileAndUnwritableOutput) {
  const auto dir = testing::scratch_dir("cli-quantize-errors");
  const std::string model = quoted(testing::testdata("stories260K.gguf"));
  CliRun bad_type = run_cli("quantize --model " + model + " --output " + quoted((dir / "x.gguf").string()) +
                         " --type q4_k_x");
  EXPECT_NE(bad_type.exit_code, 0);
  EXPECT_NE(bad_type.err.find("q4_k_x"), std::string::npos) << bad_type.err;
  EXPECT_NE(bad_type.err.find("q4_k_m"), std::string::npos) << "the error lists the valid types: " << bad_type.err;

  CliRun missing = run_cli("quantize --model " + quoted((dir / "missing.gguf").string()) + " --output " +
                        quoted((dir / "y.gguf").string()) + " --type q8_0");
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("missing.gguf"), std::string::npos) << missing.err;

  CliRun not_gguf = run_cli("quantize --model " + quoted(testing::testdata("quant/README.md")) + " --output " +
                               quoted((dir / "v.gguf").string()) + " --type q8_0");
  EXPECT_NE(not_gguf.exit_code, 0);
  EXPECT_NE(not_gguf.err.find("README.md"), std::string::npos) << not_gguf.err;

  CliRun unwritable = run_cli("quantize --model " + model + " --output " +
                           quoted((dir / "no-such-dir" / "z.gguf").string()) + " --type q8_0");
  EXPECT_NE(unwritable.exit_code, 0);
  EXPECT_NE(unwritable.err.find("error"), std::string::npos) << unwritable.err;

  CliRun no_type = run_cli("quantize --model " + model + " --output " + quoted((dir / "w.gguf").string()));
  EXPECT_NE(no_type.exit_code, 0);
}

}  // namespace
}  // namespace inferscope
