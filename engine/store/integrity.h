// SQLite's own consistency checks, turned into a damaged-database Status when they find a fault.
#pragma once

#include "engine/core/status.h"
#include "engine/store/database.h"

namespace inferscope::store {

enum class IntegrityCheck {
  quick,  // PRAGMA quick_check: page structure and formats, fast enough for every open
  full    // PRAGMA integrity_check: also that indexes match their tables
};

Status verify_integrity(Database& db, IntegrityCheck depth);

}  // namespace inferscope::store
