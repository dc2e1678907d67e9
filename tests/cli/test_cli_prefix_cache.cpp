// The paged KV options end to end: generate reports its reuse and the KV blocks; bench
// --shared-prefix measures a cold prompt, then prompts that share its prefix and take it from
// the cache (less time to first token, the shared whole blocks reused); block sizes that are not
// powers of two from 16 to 256 are refused.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/cli_runner.h"

namespace inferscope {
namespace {

using testing::CliRun;
using testing::run_cli;

TEST(CliPrefixCache, GenerateReportsReuseAndTheBlocksItHolds) {
  CliRun r = run_cli("generate --prompt 'Once upon a time' --temperature 0 --max-tokens 40 --json --kv-block-size 32");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["reused_tokens"], 0) << "one request: nothing cached before it";
  const auto& b = j["memory"]["kv_blocks"];
  EXPECT_EQ(b["block_size"], 32);
  const int64_t held = b["positions_held"].get<int64_t>();
  EXPECT_EQ(held, j["prompt_token_ids"].size() + j["token_ids"].size() - 1) << "the last token is not evaluated";
  EXPECT_EQ(b["referenced"].get<int64_t>(), (held + 31) / 32);
}

TEST(CliPrefixCache, BenchSharedPrefixReusesTheSharedBlocks) {
  CliRun r = run_cli("bench --shared-prefix 200 --new-tokens 27 --chats 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["block_size"], 16);
  EXPECT_EQ(j["reused_tokens"], 192) << "the whole blocks of the 200 shared tokens";
  ASSERT_EQ(j["chats"].size(), 3u);
  EXPECT_EQ(j["chats"][0]["reused_tokens"], 0);
  EXPECT_EQ(j["chats"][2]["reused_tokens"], 192);
  EXPECT_GT(j["cold_ttft_ms"].get<double>(), 0.0);
  EXPECT_GT(j["prefix_hit_rate"].get<double>(), 0.5);
}

TEST(CliPrefixCache, BadBlockSizesAreRefused) {
  for (const char* size : {"17", "8", "512"}) {
    CliRun r = run_cli(std::string("generate --max-tokens 1 --kv-block-size ") + size);
    EXPECT_NE(r.exit_code, 0) << size;
    EXPECT_NE(r.err.find("not one of 16, 32, 64, 128, 256"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace inferscope
