// Benchmark runs: insert and list newest first; JSON columns must hold JSON.
#include <gtest/gtest.h>

#include "tests/store/store_test_support.h"

namespace inferscope::store {
namespace {

using testing::scratch_file;
using testing::test_options;

TEST(BenchmarkRuns, InsertAndListNewestFirst) {
  Result<Store> store = Store::open(scratch_file("runs"), test_options());
  ASSERT_TRUE(store) << store.message();
  BenchmarkRunsRepo runs = store->benchmark_runs();
  Result<BenchmarkRun> first =
      runs.insert({"tiny-q4_k_m.gguf", "cpu", R"({"threads": 2})", R"({"decode_tok_s": 41.5})"});
  ASSERT_TRUE(first) << first.message();
  Result<BenchmarkRun> second = runs.insert({"tiny-f16.gguf", "cpu", R"({"threads": 2})", R"({"decode_tok_s": 12})"});
  ASSERT_TRUE(second) << second.message();

  Result<std::vector<BenchmarkRun>> listed = runs.list();
  ASSERT_TRUE(listed) << listed.message();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].id, second->id);
  EXPECT_EQ((*listed)[1].id, first->id);
  EXPECT_EQ((*listed)[1].model, "tiny-q4_k_m.gguf");
  EXPECT_EQ((*listed)[1].backend, "cpu");
  EXPECT_EQ((*listed)[1].config_json, R"({"threads": 2})");
  EXPECT_EQ((*listed)[1].metrics_json, R"({"decode_tok_s": 41.5})");
  EXPECT_EQ((*listed)[1].created_at, first->created_at);
}

TEST(BenchmarkRuns, RefusesInvalidJson) {
  Result<Store> store = Store::open(scratch_file("runs-invalid"), test_options());
  ASSERT_TRUE(store) << store.message();
  Result<BenchmarkRun> run = store->benchmark_runs().insert({"m", "cpu", "{}", "not json"});
  ASSERT_FALSE(run);
  EXPECT_NE(run.message().find("json_valid(metrics_json)"), std::string::npos) << run.message();
  Result<std::vector<BenchmarkRun>> listed = store->benchmark_runs().list();
  ASSERT_TRUE(listed) << listed.message();
  EXPECT_TRUE(listed->empty());
}

}  // namespace
}  // namespace inferscope::store
