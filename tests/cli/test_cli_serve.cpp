// inferscope-cli serve: it starts on a free port and says where, stops cleanly on SIGINT, and
// refuses to serve a non-loopback address without an API key, or with an empty key file; with
// --semantic-cache it opens the cache's database (the HTTP side: tests/serve).
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/cli_runner.h"
#include "tests/support/scratch_dir.h"

namespace inferscope {
namespace {

using testing::run_cli;

TEST(CliServe, StartsOnAFreePortAndStopsOnInterrupt) {
  // The binary runs in the background of the shell line (its stderr into the captured stdout),
  // which interrupts it after a second.
  const auto run = run_cli("serve --port 0 --threads 1 2>&1 & pid=$!; sleep 1; kill -INT $pid; wait $pid");
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("serving stories260K.gguf on http://127.0.0.1:"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("stopping after 0 requests"), std::string::npos) << run.out;
}

TEST(CliServe, ANonLoopbackAddressNeedsAKey) {
  const auto open = run_cli("serve --host 0.0.0.0 --port 0");
  EXPECT_EQ(open.exit_code, 1);
  EXPECT_NE(open.err.find("needs an API key"), std::string::npos) << open.err;
  const auto empty = run_cli("serve --host 0.0.0.0 --port 0 --api-key-file /dev/null");
  EXPECT_NE(empty.exit_code, 0);
  EXPECT_NE(empty.err.find("holds no key"), std::string::npos) << empty.err;
}

TEST(CliServe, SemanticCacheOpensItsDatabaseAndRefusesABadThreshold) {
  const std::filesystem::path database = testing::scratch_dir("serve-cache") / "cache.sqlite";
  const auto run = run_cli("serve --port 0 --threads 1 --semantic-cache --database " + database.string() +
                           " 2>&1 & pid=$!; sleep 1; kill -INT $pid; wait $pid");
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_TRUE(std::filesystem::exists(database)) << run.out;
  EXPECT_EQ(run.out.find("in memory only"), std::string::npos) << run.out;
  const auto bad = run_cli("serve --port 0 --semantic-cache --cache-threshold 2");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("cache-threshold"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace inferscope
