#include "ui/store/write_lock_probe.h"

#include <chrono>

#include "engine/store/database.h"

namespace inferscope::ui {

bool writeLockIsFree(const std::string& path) {
  store::StoreOptions options;
  options.busy_timeout = std::chrono::milliseconds(0);  // ask, never wait
  auto db = store::Database::open(path, store::OpenMode::read_write, options);
  if (!db) return false;
  // An empty BEGIN IMMEDIATE ... COMMIT takes the write lock and gives it back; it writes nothing.
  const Status probe = (*db)->write_transaction("checking for another program's lock", [] { return Status::ok(); });
  return static_cast<bool>(probe);
}

}  // namespace inferscope::ui
