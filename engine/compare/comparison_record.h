// Comparison runs in the database (engine/store): one benchmark_runs row of kind "compare" per
// run, the options in config_json and the measured configurations in metrics_json
// (comparison_json.h), written the same way by the CLI's `compare` and the app's Compare view.
#pragma once

#include <cstdint>

#include "engine/compare/comparison.h"
#include "engine/core/status.h"
#include "engine/store/store.h"

namespace inferscope {

// The new row's id.
Result<int64_t> record_comparison(store::Store& store, const ComparisonResult& result);
// A row of kind "compare" read back.
Result<ComparisonResult> comparison_from_run(const store::BenchmarkRun& run);

}  // namespace inferscope
