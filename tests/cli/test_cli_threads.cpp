// --threads: "auto" (the default, also 0) is every core with the adaptive choice on, a number fixes
// the threads, anything else is refused; the output does not depend on it.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/support/cli_runner.h"

namespace inferscope {
namespace {

using testing::CliRun;
using testing::run_cli;

nlohmann::json bench_json(const std::string& threads) {
  CliRun r = run_cli("bench --prompt-tokens 8 --gen-tokens 4 --reps 1 --json --no-record" + threads);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

TEST(CliThreads, AutoIsTheDefaultAndUsesEveryCore) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (const std::string threads : {"", " --threads auto", " --threads 0"}) {
    const nlohmann::json j = bench_json(threads);
    EXPECT_EQ(j.value("threads", -1), cores) << threads;
    EXPECT_TRUE(j.value("threads_automatic", false)) << threads;
    const double reduced = j.value("decode_threads_reduced_share", -1.0);
    EXPECT_GE(reduced, 0.0) << threads;
    EXPECT_LE(reduced, 1.0) << threads;
  }
}

TEST(CliThreads, ANumberFixesTheThreads) {
  const nlohmann::json j = bench_json(" --threads 1");
  EXPECT_EQ(j.value("threads", -1), 1);
  EXPECT_FALSE(j.value("threads_automatic", true));
}

TEST(CliThreads, OtherWordsAreRefused) {
  const CliRun r = run_cli("generate --threads many --max-tokens 1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--threads"), std::string::npos) << r.err;
}

TEST(CliThreads, TheTokensDoNotDependOnTheThreads) {
  std::string first;
  for (const char* threads : {"auto", "1", "2", "3"}) {
    const CliRun r =
        run_cli(std::string("generate --prompt 'Once upon a time' --temperature 0 --max-tokens 24 --json --threads ") +
                threads);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string ids = nlohmann::json::parse(r.out)["token_ids"].dump();
    if (first.empty()) first = ids;
    EXPECT_EQ(ids, first) << "--threads " << threads;
  }
}

}  // namespace
}  // namespace inferscope
