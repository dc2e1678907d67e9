// How SQLite failures become Status messages, and how a caller tells the kinds apart that it must
// handle differently: a locked database (retry later, never start a second database) and a
// damaged one (open a fresh database beside it, keep the old file).
#pragma once

#include <string>
#include <string_view>

#include "engine/core/status.h"

struct sqlite3;

namespace inferscope::store {

enum class StoreErrorKind { locked, damaged, other };

// The kind of a Status produced by the store (`other` for an ok Status or a foreign one).
StoreErrorKind store_error_kind(const Status& status);

// The last error on `db` after result code `rc`, as "<path>: <context>: <sqlite message>".
Status sqlite_error(sqlite3* db, int rc, const std::string& path, std::string_view context);

// A damaged-database Status for a finding that is not an SQLite result code (integrity check).
Status damaged_database_error(const std::string& path, std::string_view detail);

}  // namespace inferscope::store
