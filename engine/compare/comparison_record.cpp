#include "engine/compare/comparison_record.h"

#include "engine/compare/comparison_json.h"

namespace inferscope {

Result<int64_t> record_comparison(store::Store& store, const ComparisonResult& result) {
  const ComparisonJsonParts parts = comparison_json_parts(result);
  store::NewBenchmarkRun run;
  run.model = result.configs.empty() ? result.options.default_model : result.configs.front().model_name;
  if (run.model.empty()) run.model = result.options.default_model;
  run.backend = result.configs.empty() ? "" : result.configs.front().config.backend.backend;
  run.config_json = parts.config_json;
  run.metrics_json = parts.metrics_json;
  run.kind = store::kCompareRun;
  auto inserted = store.benchmark_runs().insert(run);
  if (!inserted) return inserted.status();
  return inserted->id;
}

Result<ComparisonResult> comparison_from_run(const store::BenchmarkRun& run) {
  if (run.kind != store::kCompareRun) {
    return Status::error("benchmark run " + std::to_string(run.id) + " is a " + run.kind + " run, not a comparison");
  }
  return comparison_from_json_parts(run.config_json, run.metrics_json);
}

}  // namespace inferscope
