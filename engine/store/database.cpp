#include "engine/store/database.h"

#include <sqlite3.h>

#include "engine/store/store_error.h"

namespace inferscope::store {
namespace {

int open_flags(OpenMode mode) {
  const int common = SQLITE_OPEN_EXRESCODE;
  switch (mode) {
    case OpenMode::read_only:
      return common | SQLITE_OPEN_READONLY;
    case OpenMode::read_write:
      return common | SQLITE_OPEN_READWRITE;
    case OpenMode::read_write_create:
      return common | SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  }
  return common | SQLITE_OPEN_READONLY;
}

}  // namespace

Result<std::unique_ptr<Database>> Database::open(const std::string& path, OpenMode mode,
                                                 const StoreOptions& options) {
  sqlite3* handle = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &handle, open_flags(mode), nullptr);
  if (rc != SQLITE_OK) {
    Status status = sqlite_error(handle, rc, path, "opening the database");
    sqlite3_close(handle);
    return status;
  }
  auto db = std::unique_ptr<Database>(new Database(handle, path, mode, options));
  sqlite3_busy_timeout(handle, static_cast<int>(options.busy_timeout.count()));
  INFERSCOPE_RETURN_IF_ERROR(db->exec_script("PRAGMA foreign_keys = ON", "enabling foreign keys"));
  return db;
}

Database::Database(sqlite3* handle, std::string path, OpenMode mode, StoreOptions options)
    : handle_(handle), path_(std::move(path)), mode_(mode), options_(std::move(options)) {}

Database::~Database() { sqlite3_close(handle_); }

Status Database::configure_for_writing() {
  Result<std::vector<std::string>> journal = query_texts("PRAGMA journal_mode = WAL", 1);
  if (!journal) return journal.status();
  if (journal->empty() || journal->front() != "wal") {
    return Status::error(path_ + ": cannot switch to WAL journal mode (got \"" +
                         (journal->empty() ? std::string() : journal->front()) + "\")");
  }
  return exec_script("PRAGMA synchronous = FULL", "setting synchronous = FULL");
}

Result<Statement> Database::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(handle_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) return error(rc, "preparing \"" + std::string(sql) + "\"");
  return Statement(*this, stmt);
}

Status Database::exec_script(const char* sql, std::string_view context) {
  const int rc = sqlite3_exec(handle_, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return error(rc, context);
  return Status::ok();
}

Status Database::write_transaction(std::string_view context, const std::function<Status()>& body) {
  // IMMEDIATE takes the write lock up front, so a busy database fails here, after the busy
  // timeout, instead of deadlocking when a read would later upgrade to a write.
  INFERSCOPE_RETURN_IF_ERROR(exec_script("BEGIN IMMEDIATE", std::string(context) + ": beginning a transaction"));
  Status status = body();
  if (status) status = exec_script("COMMIT", std::string(context) + ": committing");
  if (!status && sqlite3_get_autocommit(handle_) == 0) {
    sqlite3_exec(handle_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  return status;
}

Result<std::int64_t> Database::query_int(std::string_view sql) {
  Result<Statement> stmt = prepare(sql);
  if (!stmt) return stmt.status();
  Result<bool> row = stmt->step();
  if (!row) return row.status();
  if (!*row) return Status::error(path_ + ": \"" + std::string(sql) + "\" returned no row");
  return stmt->int64_at(0);
}

Result<std::vector<std::string>> Database::query_texts(std::string_view sql, int max_rows) {
  Result<Statement> stmt = prepare(sql);
  if (!stmt) return stmt.status();
  std::vector<std::string> texts;
  while (static_cast<int>(texts.size()) < max_rows) {
    Result<bool> row = stmt->step();
    if (!row) return row.status();
    if (!*row) break;
    texts.push_back(stmt->text_at(0));
  }
  return texts;
}

Status Database::error(int rc, std::string_view context) const { return sqlite_error(handle_, rc, path_, context); }

std::int64_t Database::last_insert_rowid() const { return sqlite3_last_insert_rowid(handle_); }

int Database::changed_rows() const { return sqlite3_changes(handle_); }

}  // namespace inferscope::store
