// bench records each run in the shared SQLite store (the desktop app's file and schema): the row
// holds the figures bench printed; --no-record leaves the file alone; the default path is the
// app's; a locked database costs one warning line, never the figures or the exit code.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/store/store.h"
#include "tests/store/store_test_support.h"
#include "tests/support/cli_runner.h"
#include "tests/support/scratch_dir.h"

namespace inferscope {
namespace {

using testing::CliRun;
using testing::quoted;
using testing::run_cli;

constexpr const char* kQuickBench = "bench --prompt-tokens 16 --gen-tokens 8 --reps 2";

std::vector<store::BenchmarkRun> stored_runs(const std::string& path) {
  auto db = store::Store::open_read_only(path);
  if (!db) return {};
  auto runs = db->benchmark_runs().list();
  return runs ? *runs : std::vector<store::BenchmarkRun>{};
}

std::string scratch_database(const std::string& name) {
  return (testing::scratch_dir(name) / "inferscope.sqlite").string();
}

// Sets an environment variable for one test; the old value comes back after it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value->c_str(), 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

int count_lines(const std::string& text) {
  std::istringstream in(text);
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

TEST(BenchRecord, ARunIsStoredWithTheFiguresItPrinted) {
  const std::string path = scratch_database("bench-record");
  CliRun r = run_cli(std::string(kQuickBench) + " --json --database " + quoted(path));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto printed = nlohmann::json::parse(r.out);
  EXPECT_NE(r.err.find("recorded as benchmark run 1 in " + path), std::string::npos) << r.err;

  auto runs = stored_runs(path);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(std::filesystem::path(runs[0].model).filename(), "stories260K.gguf");
  EXPECT_TRUE(std::filesystem::path(runs[0].model).is_absolute()) << runs[0].model;
  EXPECT_EQ(runs[0].backend, "cpu");
  EXPECT_GT(runs[0].created_at, 0);
  const auto config = nlohmann::json::parse(runs[0].config_json);
  EXPECT_EQ(config["prompt_tokens"], 16);
  EXPECT_EQ(config["gen_tokens"], 8);
  EXPECT_EQ(config["reps"], 2);
  EXPECT_EQ(config["threads"], printed["threads"]);
  EXPECT_EQ(config["backend"], "cpu");
  const auto metrics = nlohmann::json::parse(runs[0].metrics_json);
  EXPECT_EQ(metrics["decode_tokens_per_s"], printed["decode_tokens_per_s"]);
  EXPECT_EQ(metrics["prefill_tokens_per_s"], printed["prefill_tokens_per_s"]);
  EXPECT_GT(metrics["decode_tokens_per_s"]["median"].get<double>(), 0.0);
  EXPECT_GE(metrics["decode_tokens_per_s"]["max"].get<double>(), metrics["decode_tokens_per_s"]["min"].get<double>());
  EXPECT_GT(metrics["prefill_tokens_per_s"]["median"].get<double>(), 0.0);
  EXPECT_GT(metrics["bandwidth_gb_per_s"].get<double>(), 0.1);
  EXPECT_GT(metrics["memory"]["weights_bytes"].get<double>(), 1e6);

  // A second run (text output this time) adds a row, newest first; the file is the app's kind:
  // it opens for writing at the current schema.
  CliRun again = run_cli(std::string(kQuickBench) + " --database " + quoted(path));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("tg8"), std::string::npos) << again.out;
  runs = stored_runs(path);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].id, 2);
  auto db = store::Store::open(path);
  ASSERT_TRUE(db) << db.message();
  EXPECT_FALSE(db->is_read_only());
  EXPECT_TRUE(db->notice().empty()) << db->notice();
}

TEST(BenchRecord, NoRecordLeavesTheDatabaseAlone) {
  const std::string path = scratch_database("bench-no-record");
  CliRun r = run_cli(std::string(kQuickBench) + " --json --no-record --database " + quoted(path));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(r.err.find("recorded"), std::string::npos) << r.err;
}

// Without --database: $INFERSCOPE_DATABASE, else the app's file under $XDG_DATA_HOME.
TEST(BenchRecord, TheDefaultIsTheDesktopAppsDatabase) {
  const std::string chosen = scratch_database("bench-default-env");
  {
    ScopedEnv database("INFERSCOPE_DATABASE", &chosen);
    ASSERT_EQ(run_cli(std::string(kQuickBench) + " --json").exit_code, 0);
  }
  EXPECT_EQ(stored_runs(chosen).size(), 1u);

  const std::string data_home = testing::scratch_dir("bench-default-xdg").string();
  ScopedEnv database("INFERSCOPE_DATABASE", nullptr);
  ScopedEnv xdg("XDG_DATA_HOME", &data_home);
  CliRun r = run_cli(std::string(kQuickBench) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string app_database = data_home + "/Inferscope/Inferscope/inferscope.sqlite";
  EXPECT_EQ(stored_runs(app_database).size(), 1u) << r.err;
}

TEST(BenchRecord, ALockedDatabaseCostsOneWarningLineNotTheFigures) {
  const std::string path = scratch_database("bench-locked");
  ASSERT_TRUE(store::Store::open(path));
  store::testing::RawConnection other(path);
  ASSERT_EQ(other.exec("BEGIN EXCLUSIVE"), "");
  const std::string timeout = "200";
  ScopedEnv busy("INFERSCOPE_DATABASE_BUSY_TIMEOUT_MS", &timeout);
  CliRun r = run_cli(std::string(kQuickBench) + " --database " + quoted(path));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("pp16"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tg8"), std::string::npos) << r.out;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("warning: this run is not recorded in " + path, 0), 0u) << r.err;
  EXPECT_NE(r.err.find("locked"), std::string::npos) << r.err;

  CliRun json = run_cli(std::string(kQuickBench) + " --json --database " + quoted(path));
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_TRUE(nlohmann::json::accept(json.out)) << "stdout holds the JSON alone: " << json.out;
  ASSERT_EQ(other.exec("COMMIT"), "");
  EXPECT_TRUE(stored_runs(path).empty());
}

TEST(BenchRecord, AnUnopenableDatabaseCostsOneWarningLine) {
  const auto dir = testing::scratch_dir("bench-not-a-database");
  const std::string path = (dir / "inferscope.sqlite").string();
  store::testing::write_file_bytes(path, std::string(4096, 'x'));
  CliRun r = run_cli(std::string(kQuickBench) + " --database " + quoted(path));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("tg8"), std::string::npos) << r.out;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("warning: this run is not recorded"), std::string::npos) << r.err;
  EXPECT_EQ(store::testing::file_bytes(path), std::string(4096, 'x')) << "a damaged file is never written";
}

}  // namespace
}  // namespace inferscope
