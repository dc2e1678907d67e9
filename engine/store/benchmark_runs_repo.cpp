#include "engine/store/benchmark_runs_repo.h"

namespace inferscope::store {
namespace {

constexpr const char* kInsertRun =
    "INSERT INTO benchmark_runs (model, backend, config_json, metrics_json, created_at, kind) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
constexpr const char* kColumns = "SELECT id, model, backend, config_json, metrics_json, created_at, kind FROM benchmark_runs ";
constexpr const char* kNewestFirst = " ORDER BY created_at DESC, id DESC";

BenchmarkRun run_at(const Statement& row) {
  return BenchmarkRun{row.int64_at(0), row.text_at(1), row.text_at(2), row.text_at(3),
                      row.text_at(4), row.int64_at(5), row.text_at(6)};
}

}  // namespace

Result<BenchmarkRun> BenchmarkRunsRepo::insert(const NewBenchmarkRun& run) {
  BenchmarkRun record{0, run.model, run.backend, run.config_json, run.metrics_json, db_.now_ms(), run.kind};
  Status status = db_.write_transaction("saving a benchmark run of " + run.model, [&]() -> Status {
    Result<Statement> insert = db_.prepare(kInsertRun);
    if (!insert) return insert.status();
    insert->bind(1, run.model).bind(2, run.backend).bind(3, run.config_json).bind(4, run.metrics_json);
    insert->bind(5, record.created_at).bind(6, run.kind);
    INFERSCOPE_RETURN_IF_ERROR(insert->run());
    record.id = db_.last_insert_rowid();
    return Status::ok();
  });
  if (!status) return status;
  return record;
}

Result<std::vector<BenchmarkRun>> BenchmarkRunsRepo::list(const std::string& kind) {
  const std::string sql = std::string(kColumns) + (kind.empty() ? "" : "WHERE kind = ?1") + kNewestFirst;
  Result<Statement> select = db_.prepare(sql.c_str());
  if (!select) return select.status();
  if (!kind.empty()) select->bind(1, kind);
  std::vector<BenchmarkRun> runs;
  for (;;) {
    Result<bool> row = select->step();
    if (!row) return row.status();
    if (!*row) return runs;
    runs.push_back(run_at(*select));
  }
}

Result<BenchmarkRun> BenchmarkRunsRepo::find(std::int64_t id) {
  const std::string sql = std::string(kColumns) + "WHERE id = ?1";
  Result<Statement> select = db_.prepare(sql.c_str());
  if (!select) return select.status();
  select->bind(1, id);
  Result<bool> row = select->step();
  if (!row) return row.status();
  if (!*row) return Status::error("no benchmark run " + std::to_string(id));
  return run_at(*select);
}

}  // namespace inferscope::store
