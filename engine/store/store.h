// The app's and the CLI's database: one SQLite file holding chat sessions, messages, presets,
// benchmark runs and semantic-cache entries. A Store is one connection; use it from one thread.
//
//   auto store = Store::open(path);
//   if (!store && store_error_kind(store.status()) == StoreErrorKind::damaged)
//     store = Store::open_fresh_beside(path);   // the damaged file stays as it is
//   if (!store->notice().empty()) show(store->notice());  // read-only, or where the fresh file is
#pragma once

#include <memory>
#include <string>

#include "engine/core/status.h"
#include "engine/store/benchmark_runs_repo.h"
#include "engine/store/database.h"
#include "engine/store/messages_repo.h"
#include "engine/store/presets_repo.h"
#include "engine/store/semantic_cache_repo.h"
#include "engine/store/session_search.h"
#include "engine/store/sessions_repo.h"
#include "engine/store/store_error.h"
#include "engine/store/store_options.h"

namespace inferscope::store {

class Store {
 public:
  // Creates the file when missing, checks it (quick_check), migrates an older schema. A file
  // written by a newer build is opened read-only, with a notice saying so, and never modified.
  static Result<Store> open(const std::string& path, const StoreOptions& options = {});
  // Reads whatever is readable; every write fails. No integrity check, so a damaged file can
  // still be read from where it is intact.
  static Result<Store> open_read_only(const std::string& path, const StoreOptions& options = {});
  // Creates a new database "<stem>.recovered-<UTC time><ext>" next to `damaged_path`, which is
  // neither renamed, written nor deleted. The notice says where the new file is.
  static Result<Store> open_fresh_beside(const std::string& damaged_path, const StoreOptions& options = {});

  SessionsRepo sessions() { return SessionsRepo(*db_); }
  MessagesRepo messages() { return MessagesRepo(*db_); }
  PresetsRepo presets() { return PresetsRepo(*db_); }
  BenchmarkRunsRepo benchmark_runs() { return BenchmarkRunsRepo(*db_); }
  SemanticCacheRepo semantic_cache() { return SemanticCacheRepo(*db_); }
  SessionSearch search() { return SessionSearch(*db_); }

  // PRAGMA integrity_check (thorough, reads every page).
  Status check_integrity();
  const std::string& path() const { return db_->path(); }
  bool is_read_only() const { return db_->is_read_only(); }
  // Something the user should be told about this database; empty when all is as usual.
  const std::string& notice() const { return notice_; }

 private:
  Store(std::unique_ptr<Database> db, std::string notice) : db_(std::move(db)), notice_(std::move(notice)) {}
  static Result<Store> open_for_writing(const std::string& path, OpenMode mode, const StoreOptions& options,
                                        std::string notice);

  std::unique_ptr<Database> db_;  // on the heap: repos keep a reference across moves of the Store
  std::string notice_;
};

}  // namespace inferscope::store
