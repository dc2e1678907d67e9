#include "app/cli/bench_record.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>

#include "engine/compare/comparison_record.h"
#include "engine/store/store.h"

namespace inferscope::cli {

namespace {

namespace fs = std::filesystem;

// bench's JSON keys that say what was run; every other key but the model is a measurement.
constexpr const char* kConfigKeys[] = {"threads", "prompt_tokens", "gen_tokens", "depth", "reps"};

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

std::string home_dir() {
  const std::string home = environment("HOME");
  if (!home.empty()) return home;
  const passwd* user = getpwuid(getuid());
  return user != nullptr && user->pw_dir != nullptr ? user->pw_dir : "/";
}

// As the app's store does: $INFERSCOPE_DATABASE_BUSY_TIMEOUT_MS (milliseconds) or the 5 s default.
store::StoreOptions store_options() {
  store::StoreOptions options;
  const std::string timeout = environment("INFERSCOPE_DATABASE_BUSY_TIMEOUT_MS");
  char* end = nullptr;
  const long ms = std::strtol(timeout.c_str(), &end, 10);
  if (!timeout.empty() && *end == '\0' && ms >= 0) options.busy_timeout = std::chrono::milliseconds(ms);
  return options;
}

std::string absolute_path(const std::string& path) {
  std::error_code ignored;
  const fs::path absolute = fs::absolute(path, ignored);
  return absolute.empty() ? path : absolute.lexically_normal().string();
}

store::NewBenchmarkRun benchmark_run(const Args& args, const nlohmann::json& figures) {
  nlohmann::json config = {{"backend", args.string("backend", "cpu")}, {"mmap", args.flag("mmap")}};
  if (args.has("device")) config["device"] = args.string("device");
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto& [key, value] : figures.items()) {
    if (key == "model") continue;
    const bool is_config = std::find(std::begin(kConfigKeys), std::end(kConfigKeys), key) != std::end(kConfigKeys);
    (is_config ? config : metrics)[key] = value;
  }
  return {absolute_path(figures.value("model", std::string())), args.string("backend", "cpu"), config.dump(),
          metrics.dump()};
}

Result<store::Store> open_store(const std::string& path) {
  std::error_code ignored;  // a folder that cannot be made shows as the open's error
  fs::create_directories(fs::path(path).parent_path(), ignored);
  return store::Store::open(path, store_options());
}

Result<store::BenchmarkRun> insert_run(const std::string& path, const store::NewBenchmarkRun& run) {
  Result<store::Store> db = open_store(path);
  if (!db) return db.status();
  return db->benchmark_runs().insert(run);
}

Result<int64_t> insert_comparison(const std::string& path, const ComparisonResult& result) {
  Result<store::Store> db = open_store(path);
  if (!db) return db.status();
  return record_comparison(*db, result);
}

}  // namespace

std::string default_database_path() {
  const std::string overridden = environment("INFERSCOPE_DATABASE");
  if (!overridden.empty()) return overridden;
  // Qt ignores a relative XDG_DATA_HOME, as the XDG spec says to.
  const std::string xdg = environment("XDG_DATA_HOME");
  const fs::path data = !xdg.empty() && xdg.front() == '/' ? fs::path(xdg) : fs::path(home_dir()) / ".local" / "share";
  return (data / "Inferscope" / "Inferscope" / "inferscope.sqlite").string();
}

void record_bench_run(const Args& args, const nlohmann::json& figures) {
  if (args.flag("no-record")) return;
  const std::string path = args.has("database") ? args.string("database") : default_database_path();
  Result<store::BenchmarkRun> recorded = insert_run(path, benchmark_run(args, figures));
  if (!recorded) {
    std::fprintf(stderr, "warning: this run is not recorded in %s: %s\n", path.c_str(), recorded.message().c_str());
    return;
  }
  std::fprintf(stderr, "recorded as benchmark run %lld in %s\n", static_cast<long long>(recorded->id), path.c_str());
}

void record_compare_run(const Args& args, const ComparisonResult& result) {
  if (args.flag("no-record")) return;
  const std::string path = args.has("database") ? args.string("database") : default_database_path();
  Result<int64_t> recorded = insert_comparison(path, result);
  if (!recorded) {
    std::fprintf(stderr, "warning: this comparison is not recorded in %s: %s\n", path.c_str(), recorded.message().c_str());
    return;
  }
  std::fprintf(stderr, "recorded as comparison run %lld in %s\n", static_cast<long long>(*recorded), path.c_str());
}

}  // namespace inferscope::cli
