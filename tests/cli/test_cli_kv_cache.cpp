// The KV cache type options end to end: generate with a Q8_0 cache keeps llama.cpp's greedy
// tokens and reports the type and bytes; inspect's estimate follows the type; bench measures
// each listed type at a depth; a name that is not a type is refused with the list.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/support/cli_runner.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

using testing::CliRun;
using testing::quoted;
using testing::run_cli;

TEST(CliKvCache, GenerateWithQ8_0KeepsTheGreedyTokensAndReportsTheType) {
  std::ifstream in(testing::testdata("reference/stories260K.llama.cpp-b4747.json"));
  const auto ref = nlohmann::json::parse(in);
  CliRun r = run_cli(
      "generate --prompt 'Once upon a time' --temperature 0 --max-tokens 32 --json --context 256 "
      "--cache-type-k q8_0 --cache-type-v q8_0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::vector<int32_t> expected;
  for (const auto& s : ref["steps"]) expected.push_back(s["id"].get<int32_t>());
  EXPECT_EQ(j["token_ids"].get<std::vector<int32_t>>(), expected);
  EXPECT_EQ(j["memory"]["kv_cache_type_k"], "q8_0");
  EXPECT_EQ(j["memory"]["kv_cache_type_v"], "q8_0");
  EXPECT_EQ(j["memory"]["kv_cache_bytes"].get<uint64_t>(), 5u * 256u * 2u * 34u);  // layers x ctx x (K, V) x block
}

TEST(CliKvCache, InspectEstimatesTheChosenType) {
  const std::string model = quoted(testing::testdata("stories260K.gguf"));
  CliRun f16 = run_cli("inspect --json --model " + model);
  CliRun q4 = run_cli("inspect --json --model " + model + " --cache-type-k q4_0 --cache-type-v nf4");
  ASSERT_EQ(f16.exit_code, 0) << f16.err;
  ASSERT_EQ(q4.exit_code, 0) << q4.err;
  const auto a = nlohmann::json::parse(f16.out)["memory_estimate"], b = nlohmann::json::parse(q4.out)["memory_estimate"];
  EXPECT_EQ(b["kv_cache_type_k"], "q4_0");
  EXPECT_EQ(b["kv_cache_type_v"], "nf4");
  EXPECT_EQ(b["kv_cache_bytes"].get<uint64_t>() * 64, a["kv_cache_bytes"].get<uint64_t>() * 18);
}

TEST(CliKvCache, BenchMeasuresEachTypeAtADepth) {
  CliRun r = run_cli(
      "bench --json --no-record --depth 64 --prompt-tokens 16 --gen-tokens 4 --reps 1 "
      "--cache-type-k f16,q8_0,q4_0 --cache-type-v f16,q8_0,q4_0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["depth"], 64);
  const auto& runs = j["kv_cache_runs"];
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[1]["cache_type_k"], "q8_0");
  EXPECT_EQ(runs[2]["cache_type_v"], "q4_0");
  EXPECT_GT(runs[2]["decode_tokens_per_s"]["median"].get<double>(), 0.0);
  EXPECT_LT(runs[2]["kv_cache_bytes"].get<uint64_t>(), runs[0]["kv_cache_bytes"].get<uint64_t>() * 3 / 10);
}

TEST(CliKvCache, AnUnknownTypeIsRefusedWithTheList) {
  CliRun r = run_cli("generate --max-tokens 1 --cache-type-k q3_k");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("q3_k"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nf4"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace inferscope
