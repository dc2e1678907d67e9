// Benchmark and comparison runs: what ran (model, backend, config) and what it measured.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/store/database.h"

namespace inferscope::store {

// What produced a run: `inferscope-cli bench`, or a comparison (the workbench, `compare`).
inline constexpr const char* kBenchRun = "bench";
inline constexpr const char* kCompareRun = "compare";

struct NewBenchmarkRun {
  std::string model;
  std::string backend;
  std::string config_json;
  std::string metrics_json;
  std::string kind = kBenchRun;
};

struct BenchmarkRun {
  std::int64_t id = 0;
  std::string model;
  std::string backend;
  std::string config_json;
  std::string metrics_json;
  std::int64_t created_at = 0;  // Unix ms
  std::string kind = kBenchRun;
};

class BenchmarkRunsRepo {
 public:
  explicit BenchmarkRunsRepo(Database& db) : db_(db) {}

  // Both JSON texts must be valid JSON.
  Result<BenchmarkRun> insert(const NewBenchmarkRun& run);
  // Newest first; of one kind when `kind` is not empty.
  Result<std::vector<BenchmarkRun>> list(const std::string& kind = "");
  // The run with this id; an error when there is none.
  Result<BenchmarkRun> find(std::int64_t id);

 private:
  Database& db_;
};

}  // namespace inferscope::store
