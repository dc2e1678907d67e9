#include "engine/store/benchmark_runs_repo.h"

namespace inferscope::store {
namespace {

constexpr const char* kInsertRun =
    "INSERT INTO benchmark_runs (model, backend, config_json, metrics_json, created_at) VALUES (?1, ?2, ?3, ?4, ?5)";
constexpr const char* kListRuns =
    "SELECT id, model, backend, config_json, metrics_json, created_at FROM benchmark_runs "
    "ORDER BY created_at DESC, id DESC";

}  // namespace

Result<BenchmarkRun> BenchmarkRunsRepo::insert(const NewBenchmarkRun& run) {
  BenchmarkRun record{0, run.model, run.backend, run.config_json, run.metrics_json, db_.now_ms()};
  Status status = db_.write_transaction("saving a benchmark run of " + run.model, [&]() -> Status {
    Result<Statement> insert = db_.prepare(kInsertRun);
    if (!insert) return insert.status();
    insert->bind(1, run.model).bind(2, run.backend).bind(3, run.config_json).bind(4, run.metrics_json);
    insert->bind(5, record.created_at);
    INFERSCOPE_RETURN_IF_ERROR(insert->run());
    record.id = db_.last_insert_rowid();
    return Status::ok();
  });
  if (!status) return status;
  return record;
}

Result<std::vector<BenchmarkRun>> BenchmarkRunsRepo::list() {
  Result<Statement> select = db_.prepare(kListRuns);
  if (!select) return select.status();
  std::vector<BenchmarkRun> runs;
  for (;;) {
    Result<bool> row = select->step();
    if (!row) return row.status();
    if (!*row) return runs;
    runs.push_back(BenchmarkRun{select->int64_at(0), select->text_at(1), select->text_at(2), select->text_at(3),
                                select->text_at(4), select->int64_at(5)});
  }
}

}  // namespace inferscope::store
