// bench --verify N: the cost of a speculative verification of N drafted tokens, against a decode
// step and against the same rows through forward(), in one run.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/cli_runner.h"

namespace inferscope {
namespace {

using testing::CliRun;
using testing::run_cli;

TEST(CliBenchVerify, ReportsTheVerificationInDecodeSteps) {
  CliRun r = run_cli("bench --verify 5 --prompt-tokens 16 --reps 1 --json --no-record");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["drafted_tokens"], 5);
  const double step = j["decode_step_ms"].get<double>(), verify = j["verify_ms"].get<double>();
  EXPECT_GT(step, 0.0);
  EXPECT_GT(verify, 0.0);
  EXPECT_GT(j["forward_ms"].get<double>(), 0.0);
  EXPECT_NEAR(j["verify_in_steps"].get<double>(), verify / step, 1e-9 * verify / step);
}

TEST(CliBenchVerify, PrintsTheBreakEven) {
  CliRun r = run_cli("bench --verify 3 --prompt-tokens 8 --reps 1 --no-record");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("verify of 3 drafted tokens (4 rows)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("a draft of 3 pays off above"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace inferscope
