// One prepared SQL statement: bind parameters (1-based, as in SQL), step through rows, read
// columns (0-based). Finalized on destruction. Bind failures are kept and reported by step().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/status.h"

struct sqlite3_stmt;

namespace inferscope::store {

class Database;

class Statement {
 public:
  Statement(Database& db, sqlite3_stmt* stmt);

  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, const std::optional<std::int64_t>& value);
  Statement& bind(int index, const std::optional<double>& value);
  Statement& bind(int index, const std::optional<std::string>& text);
  Statement& bind_blob(int index, const void* data, std::size_t size);

  // true: a row is ready to read; false: the statement has finished.
  Result<bool> step();
  // Steps until done, for statements that return no rows.
  Status run();

  std::int64_t int64_at(int column) const;
  double double_at(int column) const;
  std::string text_at(int column) const;
  std::optional<std::int64_t> optional_int64_at(int column) const;
  std::optional<double> optional_double_at(int column) const;
  std::optional<std::string> optional_text_at(int column) const;
  std::vector<std::uint8_t> blob_at(int column) const;

 private:
  struct Finalizer {
    void operator()(sqlite3_stmt* stmt) const;
  };
  void keep_bind_error(int rc);
  bool is_null_at(int column) const;

  Database* db_;
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
  int bind_error_ = 0;
};

}  // namespace inferscope::store
