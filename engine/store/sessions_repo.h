// Chat sessions: create, read, rename, list newest first, delete with undo, purge.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/store/database.h"

namespace inferscope::store {

struct NewSession {
  std::string title;
  std::string system_prompt;
  std::string model_path;
};

struct SessionRecord {
  std::int64_t id = 0;
  std::string title;
  std::string system_prompt;
  std::string model_path;
  std::int64_t created_at = 0;  // Unix ms
  std::int64_t updated_at = 0;  // Unix ms; moves on rename and on every new message
  std::optional<std::int64_t> deleted_at;  // set while the session sits in the undo window
};

class SessionsRepo {
 public:
  explicit SessionsRepo(Database& db) : db_(db) {}

  Result<SessionRecord> create(const NewSession& session);
  // Finds deleted sessions too (deleted_at says so).
  Result<SessionRecord> get(std::int64_t id);
  // Sessions not deleted, most recently updated first.
  Result<std::vector<SessionRecord>> list();
  Status rename(std::int64_t id, const std::string& title);
  Status set_system_prompt(std::int64_t id, const std::string& system_prompt);
  // Hides the session (and its messages) until undo_delete or purge_deleted.
  Status soft_delete(std::int64_t id);
  Status undo_delete(std::int64_t id);
  // Removes every soft-deleted session with its messages for good; returns how many.
  Result<int> purge_deleted();

 private:
  // Runs an UPDATE that must change exactly one row, in its own transaction.
  Status change_one(std::int64_t id, const std::string& what, const char* sql,
                    const std::function<void(Statement&)>& bind);

  Database& db_;
};

}  // namespace inferscope::store
