#include "engine/store/migrations.h"

#include <string>

#include "engine/store/schema.h"

namespace inferscope::store {
namespace {

Status apply(Database& db, const Migration& migration) {
  const std::string context = "migrating to schema version " + std::to_string(migration.version) + " (" +
                              migration.summary + ")";
  return db.write_transaction(context, [&]() -> Status {
    Result<int> version = schema_version(db);
    if (!version) return version.status();
    if (*version >= migration.version) return Status::ok();
    INFERSCOPE_RETURN_IF_ERROR(db.exec_script(migration.sql, context));
    const std::string set_version = "PRAGMA user_version = " + std::to_string(migration.version);
    return db.exec_script(set_version.c_str(), context);
  });
}

}  // namespace

Result<int> schema_version(Database& db) {
  Result<std::int64_t> version = db.query_int("PRAGMA user_version");
  if (!version) return version.status();
  return static_cast<int>(*version);
}

Status migrate_to_current(Database& db) {
  Result<int> version = schema_version(db);
  if (!version) return version.status();
  for (const Migration& migration : migrations()) {
    if (migration.version > *version) INFERSCOPE_RETURN_IF_ERROR(apply(db, migration));
  }
  return Status::ok();
}

}  // namespace inferscope::store
