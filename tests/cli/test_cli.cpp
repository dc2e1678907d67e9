// inferscope-cli end to end: the real binary, real files, output parsed back.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "engine/backend/backend_registry.h"
#include "kernels/cpu/matmul.h"
#include "tests/support/cli_runner.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

using testing::CliRun;
using testing::quoted;
using testing::run_cli;
using testing::run_cli_with_env;

nlohmann::json load_reference(const std::string& name) {
  std::ifstream in(testing::testdata("reference/" + name));
  return nlohmann::json::parse(in);
}

TEST(Cli, GenerateJsonMatchesLlamaCppGreedy) {
  const auto ref = load_reference("stories260K.llama.cpp-b4747.json");
  CliRun r = run_cli("generate --prompt 'Once upon a time' --temperature 0 --max-tokens 32 --json --top-logprobs 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["prompt_token_ids"], ref["prompt_ids"]);
  std::vector<int32_t> expected;
  for (const auto& s : ref["steps"]) expected.push_back(s["id"].get<int32_t>());
  EXPECT_EQ(j["token_ids"].get<std::vector<int32_t>>(), expected);
  EXPECT_EQ(j["text"].get<std::string>().rfind(", there was a little girl named Lily", 0), 0u) << j["text"];
  EXPECT_GT(j["timings"]["decode_tokens_per_s"].get<double>(), 0.0);
  EXPECT_GE(j["timings"]["ttft_ms"].get<double>(), 0.0);
  ASSERT_EQ(j["steps"].size(), expected.size());
  // The chosen greedy token is the most likely one, with a log-probability <= 0.
  const auto& first = j["steps"][0]["top_logprobs"];
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first[0]["id"].get<int32_t>(), expected[0]);
  EXPECT_LE(first[0]["logprob"].get<double>(), 0.0);
  EXPECT_GE(first[0]["logprob"].get<double>(), first[1]["logprob"].get<double>());
}

// Speculative decoding changes nothing in the reply: still llama.cpp's greedy continuation, with
// the drafted and accepted counts in the JSON and the summary.
TEST(Cli, GenerateWithLookupDraftsStillMatchesLlamaCppGreedy) {
  const auto ref = load_reference("stories260K.llama.cpp-b4747.json");
  CliRun r = run_cli("generate --prompt 'Once upon a time' --temperature 0 --max-tokens 32 --json --draft-lookup 4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::vector<int32_t> expected;
  for (const auto& s : ref["steps"]) expected.push_back(s["id"].get<int32_t>());
  EXPECT_EQ(j["token_ids"].get<std::vector<int32_t>>(), expected);
  const auto drafted = j["draft_tokens"].get<int64_t>();
  EXPECT_GT(drafted, 0) << "the story repeats its phrases";
  EXPECT_LE(j["accepted_tokens"].get<int64_t>(), drafted);
  EXPECT_NE(r.err.find("speculative decoding: " + std::to_string(drafted) + " tokens drafted"), std::string::npos) << r.err;
}

// The other draft sources change nothing either: a draft model of the same vocabulary (an MoE
// model derived from the bundled one), and the model's own first layers.
TEST(Cli, GenerateWithModelAndLayerDraftsStillMatchesLlamaCppGreedy) {
  const auto ref = load_reference("stories260K.llama.cpp-b4747.json");
  std::vector<int32_t> expected;
  for (const auto& s : ref["steps"]) expected.push_back(s["id"].get<int32_t>());
  const std::string draft_model = quoted(testing::testdata("derived/stories260K-moe4-distinct.gguf"));
  for (const std::string& drafting : {"--draft-model " + draft_model + " --draft-max 6", std::string("--draft-layers 3")}) {
    SCOPED_TRACE(drafting);
    CliRun r = run_cli("generate --prompt 'Once upon a time' --temperature 0 --max-tokens 32 --json " + drafting);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["token_ids"].get<std::vector<int32_t>>(), expected);
    const auto drafted = j["draft_tokens"].get<int64_t>();
    EXPECT_GT(drafted, 0);
    EXPECT_LE(j["accepted_tokens"].get<int64_t>(), drafted);
    EXPECT_NE(r.err.find("speculative decoding: " + std::to_string(drafted) + " tokens drafted"), std::string::npos) << r.err;
  }
}

TEST(Cli, GenerateRefusesADraftModelOfAnotherVocabularyAndTwoDraftSources) {
  CliRun other = run_cli("generate --max-tokens 4 --draft-model " + quoted(testing::testdata("llama-2-tiny-random.gguf")));
  EXPECT_NE(other.exit_code, 0);
  EXPECT_NE(other.err.find("32000 and 512 tokens"), std::string::npos) << other.err;
  CliRun two = run_cli("generate --max-tokens 4 --draft-lookup 4 --draft-layers 2");
  EXPECT_NE(two.exit_code, 0);
  EXPECT_NE(two.err.find("choose one of --draft-lookup, --draft-model, --draft-layers and --draft-mtp"), std::string::npos) << two.err;
  CliRun deep = run_cli("generate --max-tokens 4 --draft-layers 9");
  EXPECT_NE(deep.exit_code, 0);
  EXPECT_NE(deep.err.find("1 to 5 layers"), std::string::npos) << deep.err;
}

TEST(Cli, GenerateStreamsTextAndPrintsSummary) {
  CliRun r = run_cli("generate --prompt 'Once upon a time' --max-tokens 16 --seed 42 --temperature 0.8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(r.out.empty());
  EXPECT_NE(r.err.find("time to first token"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("decode"), std::string::npos);
  EXPECT_NE(r.err.find("KV cache"), std::string::npos);
  CliRun again = run_cli("generate --prompt 'Once upon a time' --max-tokens 16 --seed 42 --temperature 0.8");
  EXPECT_EQ(r.out, again.out) << "same seed, same text";
}

TEST(Cli, BeamSearchRuns) {
  CliRun r = run_cli("generate --prompt 'Once upon a time' --max-tokens 12 --beam-width 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["token_ids"].empty());
  EXPECT_LE(j["token_ids"].size(), 12u);
}

TEST(Cli, InspectListsTensorsAndMemory) {
  CliRun r = run_cli("inspect --json --model " + quoted(testing::testdata("stories260K.gguf")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["config"]["architecture"], "llama");
  EXPECT_EQ(j["config"]["n_layer"], 5);
  EXPECT_EQ(j["tensors"].size(), 48u);
  EXPECT_EQ(j["tensors"][0]["name"], "token_embd.weight");
  EXPECT_EQ(j["tokenizer"]["n_vocab"], 512);
  // 5 layers x 2048 positions x 32 KV values x 2 (K, V) x 2 bytes.
  EXPECT_EQ(j["memory_estimate"]["kv_cache_bytes"], 5 * 2048 * 32 * 2 * 2);
  EXPECT_EQ(j["memory_estimate"]["weights_bytes"].get<uint64_t>(), 1185376u - 14176u);
}

TEST(Cli, BadModelFileGivesClearErrorNotCrash) {
  const auto dir = testing::scratch_dir("cli-bad");
  const std::string path = (dir / "truncated.gguf").string();
  {
    std::ifstream in(testing::testdata("stories260K.gguf"), std::ios::binary);
    std::vector<char> bytes(5000);
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  CliRun r = run_cli("generate --model " + quoted(path) + " --max-tokens 4");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("truncated.gguf"), std::string::npos) << r.err;
  CliRun missing = run_cli("inspect --model /nonexistent/model.gguf");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("cannot open"), std::string::npos) << missing.err;
  CliRun bert = run_cli("generate --model " + quoted(testing::testdata("derived/tiny-random-bert-bge.gguf")));
  EXPECT_EQ(bert.exit_code, 1);
  EXPECT_NE(bert.err.find("is an embedding model (bert)"), std::string::npos) << bert.err;
  CliRun falcon = run_cli("generate --model " + quoted(testing::testdata("llama.cpp-vocab/ggml-vocab-falcon.gguf")));
  EXPECT_EQ(falcon.exit_code, 1);
  EXPECT_NE(falcon.err.find("unsupported architecture 'falcon'"), std::string::npos) << falcon.err;
}

// embed --json: the L2-normalized mean-pooled vector llama.cpp gives for the tiny BERT.
TEST(Cli, EmbedPrintsLlamaCppsNormalizedEmbedding) {
  std::ifstream in(testing::testdata("reference/tiny-random-bert-bge.llama.cpp-b4747.json"));
  const nlohmann::json ref = nlohmann::json::parse(in)["sentences"][0];
  CliRun r = run_cli("embed --json --threads 2 --model " + quoted(testing::testdata("derived/tiny-random-bert-bge.gguf")) +
                     " --text " + quoted(ref["text"].get<std::string>()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json out = nlohmann::json::parse(r.out);
  EXPECT_EQ(out["n_embd"], 16);
  const auto got = out["embedding"].get<std::vector<double>>();
  const auto want = ref["embedding_l2_normalized"].get<std::vector<double>>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 2e-3) << i;
  CliRun missing = run_cli("embed --model " + quoted(testing::testdata("derived/tiny-random-bert-bge.gguf")));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("--text is required"), std::string::npos) << missing.err;
}

TEST(Cli, TokenizeAndDetokenizeRoundTrip) {
  CliRun t = run_cli("tokenize --text 'Once upon a time'");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(t.out, "1 403 407 261 378\n");
  CliRun d = run_cli("detokenize --ids '403 407 261 378'");
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_EQ(d.out, " Once upon a time\n");
}

TEST(Cli, MakeModelWritesALoadableModel) {
  const auto dir = testing::scratch_dir("cli-make-model");
  const std::string path = (dir / "tiny.gguf").string();
  CliRun m = run_cli("make-model --output " + quoted(path) +
                  " --embd 64 --layers 2 --heads 4 --kv-heads 2 --ff 128 --type q8_0 --context 128");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  CliRun i = run_cli("inspect --json --model " + quoted(path));
  ASSERT_EQ(i.exit_code, 0) << i.err;
  const auto j = nlohmann::json::parse(i.out);
  EXPECT_EQ(j["config"]["n_embd"], 64);
  EXPECT_EQ(j["config"]["n_head_kv"], 2);
  EXPECT_EQ(j["tensors"][0]["type"], "q8_0");
  CliRun g = run_cli("generate --json --max-tokens 8 --temperature 0 --model " + quoted(path));
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_EQ(nlohmann::json::parse(g.out)["token_ids"].size(), 8u);
}

TEST(Cli, MakeModelTiedOutputAndExpertsRun) {
  const auto dir = testing::scratch_dir("cli-make-model-moe");
  const std::string path = (dir / "moe.gguf").string();
  CliRun m = run_cli("make-model --output " + quoted(path) +
                     " --embd 64 --layers 2 --heads 4 --kv-heads 1 --ff 96 --experts 4 --experts-used 2 --tied"
                     " --type q4_0 --context 64");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  CliRun i = run_cli("inspect --json --model " + quoted(path));
  ASSERT_EQ(i.exit_code, 0) << i.err;
  const auto j = nlohmann::json::parse(i.out);
  EXPECT_EQ(j["config"]["n_expert"], 4);
  for (const auto& t : j["tensors"]) EXPECT_NE(t["name"], "output.weight") << "tied models have no output matrix";
  CliRun g = run_cli("generate --json --max-tokens 6 --temperature 0 --model " + quoted(path));
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_EQ(nlohmann::json::parse(g.out)["token_ids"].size(), 6u);
}

TEST(Cli, PerplexityOfTheModelsOwnStyleIsLow) {
  const auto dir = testing::scratch_dir("cli-ppl");
  const std::string path = (dir / "story.txt").string();
  std::ofstream(path) << "Once upon a time, there was a little girl named Lily. She loved to play outside in the "
                         "park. One day, she saw a big, red ball. She wanted to play with it, but it was too high. "
                         "Lily asked her mom to help her. Her mom said, \"Let's try to get it together.\"";
  CliRun r = run_cli("perplexity --context 32 --text " + quoted(path));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto pos = r.out.find("perplexity: ");
  ASSERT_NE(pos, std::string::npos) << r.out;
  const double ppl = std::stod(r.out.substr(pos + 12));
  EXPECT_GT(ppl, 1.0);
  EXPECT_LT(ppl, 20.0) << "stories260K should find TinyStories text likely";
}

TEST(Cli, BenchReportsThroughputAndBound) {
  CliRun r = run_cli("bench --prompt-tokens 16 --gen-tokens 8 --reps 2 --json --no-record");  // not the user's database
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["prefill_tokens_per_s"]["median"].get<double>(), 0.0);
  EXPECT_GT(j["decode_tokens_per_s"]["median"].get<double>(), 0.0);
  EXPECT_GT(j["bandwidth_gb_per_s"].get<double>(), 0.1);
  EXPECT_GT(j["decode_bound_tokens_per_s"].get<double>(), 0.0);
  // The bundled model's F32 matrices: the CPU kernels of this machine for prefill and decode.
  ASSERT_EQ(j["kernels"].size(), 1u) << j["kernels"].dump();
  EXPECT_EQ(j["kernels"][0]["type"], "f32");
  EXPECT_EQ(j["kernels"][0]["prefill"], kernels::matmul_kernel_name(kernels::GgmlType::F32, 64, 16));
  EXPECT_EQ(j["kernels"][0]["decode"], kernels::matmul_kernel_name(kernels::GgmlType::F32, 64, 1));
}

TEST(Cli, UnknownOptionsAndBackendsAreRejected) {
  EXPECT_EQ(run_cli("generate --no-such-option 1").exit_code, 2);
  CliRun r = run_cli("generate --backend metal");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown backend"), std::string::npos) << r.err;
  if (!is_backend_name("vulkan")) GTEST_SKIP() << "this build has no Vulkan backend for the device check";
  r = run_cli("generate --backend vulkan --device 77");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("77"), std::string::npos) << r.err;
}

TEST(Cli, ArgumentsParseStrictlyAndEveryCommandHasHelp) {
  CliRun r = run_cli("generate --prompt one two --max-tokens 1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("two"), std::string::npos) << r.err;
  r = run_cli("generate --max-tokens");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--max-tokens"), std::string::npos) << r.err;
  r = run_cli("generate --temperature 0 --frequency-penalty -0.5 --max-tokens 2 --json");  // a negative value
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run_cli("generate --temperature 0 --max-tokens 2 --prompt A --prompt B --json");  // the last one counts
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["prompt_token_ids"].size(), 2u);
  const CliRun top = run_cli("--help");
  const std::string listing = top.out + top.err;
  for (const char* command : {"generate", "inspect", "bench", "perplexity", "tokenize", "detokenize", "make-model",
                              "quantize", "imatrix", "prune", "evaluate", "compare", "embed", "cache", "serve"}) {
    EXPECT_NE(listing.find(std::string("  ") + command + " "), std::string::npos) << command << " missing from:\n" << listing;
    const CliRun help = run_cli(std::string(command) + " --help");
    EXPECT_EQ(help.exit_code, 0) << command;
    EXPECT_EQ(help.err.rfind(std::string("usage: inferscope-cli ") + command, 0), 0u) << help.err;
  }
}

TEST(Cli, InspectListsDevicesOfEveryBackend) {
  CliRun r = run_cli("inspect --devices --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const std::vector<std::string> names = backend_names();  // cpu, then every plug-in (cuda, vulkan...)
  ASSERT_EQ(j.size(), names.size());
  EXPECT_EQ(j[0]["backend"], "cpu");
  for (std::size_t i = 1; i < names.size(); ++i) {
    EXPECT_EQ(j[i]["backend"], names[i]);
    // Either devices with their limits, or the reason there are none.
    if (j[i]["devices"].empty()) {
      EXPECT_FALSE(j[i]["unavailable"].get<std::string>().empty()) << names[i];
    } else {
      EXPECT_FALSE(j[i]["devices"][0]["name"].get<std::string>().empty()) << names[i];
      if (names[i] == "vulkan") {
        EXPECT_TRUE(j[i]["devices"][0]["properties"].contains("max storage buffer range"));
      }
    }
  }
}

TEST(Cli, VulkanWithoutADriverIsAClearError) {
  if (!is_backend_name("vulkan")) GTEST_SKIP() << "this build has no Vulkan backend";
  // The loader finds no driver: the CLI says so and the CPU backend still works.
  const std::string no_driver = "VK_ICD_FILENAMES=/nonexistent.json VK_DRIVER_FILES=/nonexistent.json";
  CliRun r = run_cli_with_env(no_driver, "generate --backend vulkan --max-tokens 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("vulkan backend is not available"), std::string::npos) << r.err;
  r = run_cli_with_env(no_driver, "generate --max-tokens 2");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace inferscope
