#include "engine/store/store_error.h"

#include <sqlite3.h>

namespace inferscope::store {
namespace {

// Every store error message starts with one of these, so the kind survives as plain text.
constexpr std::string_view kLockedPrefix = "database locked: ";
constexpr std::string_view kDamagedPrefix = "database damaged: ";

bool starts_with(const std::string& text, std::string_view prefix) { return text.rfind(prefix, 0) == 0; }

bool is_lock_code(int primary_code) { return primary_code == SQLITE_BUSY || primary_code == SQLITE_LOCKED; }

bool is_damage_code(int primary_code) { return primary_code == SQLITE_CORRUPT || primary_code == SQLITE_NOTADB; }

}  // namespace

StoreErrorKind store_error_kind(const Status& status) {
  if (starts_with(status.message(), kLockedPrefix)) return StoreErrorKind::locked;
  if (starts_with(status.message(), kDamagedPrefix)) return StoreErrorKind::damaged;
  return StoreErrorKind::other;
}

Status sqlite_error(sqlite3* db, int rc, const std::string& path, std::string_view context) {
  const int extended = db != nullptr ? sqlite3_extended_errcode(db) : rc;
  const std::string detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  const std::string where = path + ": " + std::string(context) + ": ";
  const int primary = rc & 0xff;
  if (is_lock_code(primary)) {
    return Status::error(std::string(kLockedPrefix) + where + detail +
                         " (another connection or process holds the lock; gave up after the busy timeout)");
  }
  if (is_damage_code(primary)) {
    return Status::error(std::string(kDamagedPrefix) + where + detail +
                         " (the file is not an intact SQLite database; open a fresh one beside it)");
  }
  return Status::error(where + detail + " (SQLite code " + std::to_string(extended) + ")");
}

Status damaged_database_error(const std::string& path, std::string_view detail) {
  return Status::error(std::string(kDamagedPrefix) + path + ": integrity check failed: " + std::string(detail) +
                       " (open a fresh database beside it; the old file is kept)");
}

}  // namespace inferscope::store
