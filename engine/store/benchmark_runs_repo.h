// Benchmark and comparison runs: what ran (model, backend, config) and what it measured.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/store/database.h"

namespace inferscope::store {

struct NewBenchmarkRun {
  std::string model;
  std::string backend;
  std::string config_json;
  std::string metrics_json;
};

struct BenchmarkRun {
  std::int64_t id = 0;
  std::string model;
  std::string backend;
  std::string config_json;
  std::string metrics_json;
  std::int64_t created_at = 0;  // Unix ms
};

class BenchmarkRunsRepo {
 public:
  explicit BenchmarkRunsRepo(Database& db) : db_(db) {}

  // Both JSON texts must be valid JSON.
  Result<BenchmarkRun> insert(const NewBenchmarkRun& run);
  // Newest first.
  Result<std::vector<BenchmarkRun>> list();

 private:
  Database& db_;
};

}  // namespace inferscope::store
