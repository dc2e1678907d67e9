// One SQLite connection (use it from one thread): opening with the store's pragmas (WAL, full
// sync, foreign keys, busy timeout), statements, and short write transactions.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/status.h"
#include "engine/store/statement.h"
#include "engine/store/store_options.h"

struct sqlite3;

namespace inferscope::store {

enum class OpenMode {
  read_only,         // never writes the file
  read_write,        // the file must exist
  read_write_create  // creates the file when missing
};

class Database {
 public:
  static Result<std::unique_ptr<Database>> open(const std::string& path, OpenMode mode, const StoreOptions& options);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // WAL journal, synchronous=FULL (a commit survives power loss), foreign keys on.
  Status configure_for_writing();

  Result<Statement> prepare(std::string_view sql);
  // Runs SQL text that may hold several statements and returns no rows (schema scripts).
  Status exec_script(const char* sql, std::string_view context);
  // BEGIN IMMEDIATE, body, COMMIT; ROLLBACK when the body or the commit fails.
  Status write_transaction(std::string_view context, const std::function<Status()>& body);

  Result<std::int64_t> query_int(std::string_view sql);
  // Every row's first column as text ("ok" from an intact integrity check), at most max_rows.
  Result<std::vector<std::string>> query_texts(std::string_view sql, int max_rows);

  Status error(int rc, std::string_view context) const;
  std::int64_t last_insert_rowid() const;
  int changed_rows() const;
  std::int64_t now_ms() const { return options_.now_ms(); }
  const std::string& path() const { return path_; }
  bool is_read_only() const { return mode_ == OpenMode::read_only; }

 private:
  Database(sqlite3* handle, std::string path, OpenMode mode, StoreOptions options);

  sqlite3* handle_;
  std::string path_;
  OpenMode mode_;
  StoreOptions options_;
};

}  // namespace inferscope::store
