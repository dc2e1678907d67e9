#include "engine/store/statement.h"

#include <sqlite3.h>

#include "engine/store/database.h"

namespace inferscope::store {

void Statement::Finalizer::operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }

Statement::Statement(Database& db, sqlite3_stmt* stmt) : db_(&db), stmt_(stmt) {}

void Statement::keep_bind_error(int rc) {
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
}

Statement& Statement::bind(int index, std::int64_t value) {
  keep_bind_error(sqlite3_bind_int64(stmt_.get(), index, value));
  return *this;
}

Statement& Statement::bind(int index, double value) {
  keep_bind_error(sqlite3_bind_double(stmt_.get(), index, value));
  return *this;
}

Statement& Statement::bind(int index, std::string_view text) {
  keep_bind_error(sqlite3_bind_text64(stmt_.get(), index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Statement& Statement::bind(int index, const std::optional<std::int64_t>& value) {
  if (value) return bind(index, *value);
  keep_bind_error(sqlite3_bind_null(stmt_.get(), index));
  return *this;
}

Statement& Statement::bind(int index, const std::optional<double>& value) {
  if (value) return bind(index, *value);
  keep_bind_error(sqlite3_bind_null(stmt_.get(), index));
  return *this;
}

Statement& Statement::bind(int index, const std::optional<std::string>& text) {
  if (text) return bind(index, std::string_view(*text));
  keep_bind_error(sqlite3_bind_null(stmt_.get(), index));
  return *this;
}

Statement& Statement::bind_blob(int index, const void* data, std::size_t size) {
  // A zero-length blob with a null pointer would bind NULL; "" keeps it an empty blob.
  const void* bytes = size == 0 ? "" : data;
  keep_bind_error(sqlite3_bind_blob64(stmt_.get(), index, bytes, size, SQLITE_TRANSIENT));
  return *this;
}

Result<bool> Statement::step() {
  if (bind_error_ != SQLITE_OK) return db_->error(bind_error_, "binding parameters");
  const int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_->error(rc, std::string("running \"") + sqlite3_sql(stmt_.get()) + "\"");
}

Status Statement::run() {
  for (;;) {
    Result<bool> row = step();
    if (!row) return row.status();
    if (!*row) return Status::ok();
  }
}

bool Statement::is_null_at(int column) const { return sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL; }

std::int64_t Statement::int64_at(int column) const { return sqlite3_column_int64(stmt_.get(), column); }

double Statement::double_at(int column) const { return sqlite3_column_double(stmt_.get(), column); }

std::string Statement::text_at(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_.get(), column));
  if (text == nullptr) return {};
  return std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(stmt_.get(), column)));
}

std::optional<std::int64_t> Statement::optional_int64_at(int column) const {
  if (is_null_at(column)) return std::nullopt;
  return int64_at(column);
}

std::optional<double> Statement::optional_double_at(int column) const {
  if (is_null_at(column)) return std::nullopt;
  return double_at(column);
}

std::optional<std::string> Statement::optional_text_at(int column) const {
  if (is_null_at(column)) return std::nullopt;
  return text_at(column);
}

std::vector<std::uint8_t> Statement::blob_at(int column) const {
  const auto* bytes = static_cast<const std::uint8_t*>(sqlite3_column_blob(stmt_.get(), column));
  const auto size = static_cast<std::size_t>(sqlite3_column_bytes(stmt_.get(), column));
  if (bytes == nullptr) return {};
  return std::vector<std::uint8_t>(bytes, bytes + size);
}

}  // namespace inferscope::store
