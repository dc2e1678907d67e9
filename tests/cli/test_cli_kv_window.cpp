// The KV window, context shift and parallel decode end to end: generate with --kv-window runs
// past its context in a bounded number of blocks; --context-shift goes on where the context
// fills and reports the shifts; a window too large for the context is refused; bench
// --parallel reports the aggregate and per-sequence rates.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/cli_runner.h"

namespace inferscope {
namespace {

using testing::CliRun;
using testing::run_cli;

TEST(CliKvWindow, GenerateRunsPastTheContextInBoundedBlocks) {
  CliRun r = run_cli("generate --prompt 'Once upon a time' --max-tokens 300 --context 128 --kv-window 64 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NE(j["stop_reason"], "context_full");
  EXPECT_LE(j["memory"]["kv_blocks"]["referenced"].get<int64_t>(), 7) << "sink block, window, one leaving, one written";
}

TEST(CliKvWindow, ContextShiftGoesOnAndCountsTheShifts) {
  CliRun shifted = run_cli("generate --prompt 'Once upon a time' --temperature 0 --max-tokens 200 --context 64 "
                           "--context-shift --json");
  ASSERT_EQ(shifted.exit_code, 0) << shifted.err;
  CliRun stopped = run_cli("generate --prompt 'Once upon a time' --temperature 0 --max-tokens 200 --context 64 --json");
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  const auto s = nlohmann::json::parse(shifted.out), t = nlohmann::json::parse(stopped.out);
  ASSERT_EQ(t["stop_reason"], "context_full");
  EXPECT_GE(s["context_shifts"].get<int>(), 1);
  EXPECT_GT(s["token_ids"].size(), t["token_ids"].size());
}

TEST(CliKvWindow, AWindowLargerThanTheContextAllowsIsRefused) {
  CliRun r = run_cli("generate --max-tokens 1 --context 128 --kv-window 120");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("needs a context of at least"), std::string::npos) << r.err;
}

TEST(CliParallel, BenchReportsAggregateAndPerSequenceRates) {
  CliRun r = run_cli("bench --parallel 3 --prompt-tokens 16 --gen-tokens 8 --reps 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["parallel"], 3);
  EXPECT_GT(j["aggregate_decode_tokens_per_s"].get<double>(), 0.0);
  EXPECT_NEAR(j["aggregate_decode_tokens_per_s"].get<double>(), 3 * j["per_sequence_decode_tokens_per_s"].get<double>(),
              1e-6 * j["aggregate_decode_tokens_per_s"].get<double>());
}

}  // namespace
}  // namespace inferscope
