// Brings a database up to the current schema, one migration per transaction, in order.
#pragma once

#include "engine/core/status.h"
#include "engine/store/database.h"

namespace inferscope::store {

Result<int> schema_version(Database& db);

// Applies every migration above the database's user_version. Each runs in its own transaction
// that rechecks the version first, so two processes opening the same old file cannot both apply
// it, and a crash leaves the database at the last completed version.
Status migrate_to_current(Database& db);

}  // namespace inferscope::store
