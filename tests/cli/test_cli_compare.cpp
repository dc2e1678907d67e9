// inferscope-cli compare end to end: JSON with one object per configuration, the run recorded in
// the database, refusals reported without stopping the rest, bad configurations rejected.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "engine/compare/comparison_record.h"
#include "tests/support/cli_runner.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

using testing::CliRun;
using testing::quoted;
using testing::run_cli;

std::string prompts_file(const std::string& dir) {
  const std::string path = (testing::scratch_dir(dir) / "prompts.txt").string();
  std::ofstream(path) << "Once upon a time\n\nThe little dog\n";
  return path;
}

TEST(CliCompare, JsonHasEveryConfigurationWithItsFiguresAndIsRecorded) {
  const std::string db = (testing::scratch_dir("cli-compare-db") / "runs.sqlite").string();
  CliRun run = run_cli("compare --model " + quoted(testing::testdata("stories260K.gguf")) +
                       " --baseline threads=2 --candidate threads=2,weights=q8_0 --candidate "
                       "'threads=2,weights=q4_0,cache-type-k=q4_0,cache-type-v=q4_0,label=small' --prompts " +
                       quoted(prompts_file("cli-compare")) + " --reps 2 --max-tokens 16 --json --database " +
                       quoted(db));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  ASSERT_EQ(j["configurations"].size(), 3u);
  EXPECT_EQ(j["prompts"].size(), 2u);
  for (const auto& c : j["configurations"]) {
    for (const char* key : {"label", "config", "prefill_tokens_per_s", "decode_tokens_per_s", "ttft_ms", "memory",
                            "mean_kl", "top1_agreement", "max_kl", "perplexity"}) {
      EXPECT_TRUE(c.contains(key)) << key;
    }
    EXPECT_TRUE(c["ran"].get<bool>());
    EXPECT_GT(c["decode_tokens_per_s"].get<double>(), 0);
    EXPECT_EQ(c["decode_tokens_per_s_spread"]["samples"].size(), 2u);
    EXPECT_GT(c["memory"]["weights_bytes"].get<uint64_t>(), 0u);
    EXPECT_EQ(c["replies"].size(), 2u);
  }
  const auto& base = j["configurations"][0];
  EXPECT_EQ(base["label"], "baseline");
  EXPECT_EQ(base["mean_kl"].get<double>(), 0.0);
  EXPECT_EQ(base["top1_agreement"].get<double>(), 1.0);
  const auto& small = j["configurations"][2];
  EXPECT_EQ(small["label"], "small");
  EXPECT_EQ(small["config"], "weights=q4_0,cache-type-k=q4_0,cache-type-v=q4_0,threads=2");
  EXPECT_GT(small["mean_kl"].get<double>(), j["configurations"][1]["mean_kl"].get<double>());
  EXPECT_LT(small["memory"]["kv_cache_bytes"].get<uint64_t>(), base["memory"]["kv_cache_bytes"].get<uint64_t>());
  EXPECT_NE(run.err.find("recorded as comparison run"), std::string::npos) << run.err;

  auto store = store::Store::open(db);
  ASSERT_TRUE(store) << store.message();
  auto runs = store->benchmark_runs().list(store::kCompareRun);
  ASSERT_TRUE(runs && runs->size() == 1u);
  auto back = comparison_from_run(runs->front());
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(back->configs[2].config.label, "small");
  EXPECT_DOUBLE_EQ(back->configs[2].quality.mean_kl, small["mean_kl"].get<double>());
}

TEST(CliCompare, TableShowsRefusalsAndTheReplies) {
  CliRun run = run_cli("compare --model " + quoted(testing::testdata("stories260K.gguf")) +
                       " --candidate model=/nonexistent.gguf --candidate weights=q8_0 --prompt 'Once upon a time'"
                       " --reps 1 --max-tokens 8 --no-record");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("refused"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("/nonexistent.gguf"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("[candidate 2]"), std::string::npos) << run.out;
}

TEST(CliCompare, BadConfigurationsAndMissingPromptsAreUsageErrors) {
  CliRun bad = run_cli("compare --candidate weights=q9 --prompt hi --no-record");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("unknown weight format"), std::string::npos) << bad.err;
  CliRun none = run_cli("compare --candidate weights=q8_0 --no-record");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("no prompts"), std::string::npos) << none.err;
  CliRun alone = run_cli("compare --prompt hi --no-record");
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_NE(alone.err.find("1 to 3 --candidate"), std::string::npos) << alone.err;
}

}  // namespace
}  // namespace inferscope
