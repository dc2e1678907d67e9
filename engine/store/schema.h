// The database schema as an ordered list of migrations. Migration N takes a database from
// `PRAGMA user_version` N-1 to N. Published migrations never change: a schema change is a new
// migration appended to the list (see README.md).
#pragma once

#include <span>

namespace inferscope::store {

struct Migration {
  int version;          // user_version after this migration
  const char* summary;  // for error messages
  const char* sql;
};

std::span<const Migration> migrations();
// The user_version this build writes: the last migration's.
int current_schema_version();

}  // namespace inferscope::store
