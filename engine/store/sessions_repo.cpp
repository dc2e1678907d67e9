#include "engine/store/sessions_repo.h"

namespace inferscope::store {
namespace {

constexpr const char* kSessionColumns =
    "SELECT id, title, system_prompt, model_path, created_at, updated_at, deleted_at FROM sessions ";
constexpr const char* kInsertSession =
    "INSERT INTO sessions (title, system_prompt, model_path, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?4)";
constexpr const char* kRenameSession =
    "UPDATE sessions SET title = ?2, updated_at = ?3 WHERE id = ?1 AND deleted_at IS NULL";
constexpr const char* kSetSystemPrompt =
    "UPDATE sessions SET system_prompt = ?2, updated_at = ?3 WHERE id = ?1 AND deleted_at IS NULL";
constexpr const char* kSoftDeleteSession =
    "UPDATE sessions SET deleted_at = ?2 WHERE id = ?1 AND deleted_at IS NULL";
constexpr const char* kUndoDeleteSession =
    "UPDATE sessions SET deleted_at = NULL WHERE id = ?1 AND deleted_at IS NOT NULL";
constexpr const char* kPurgeDeletedSessions = "DELETE FROM sessions WHERE deleted_at IS NOT NULL";

SessionRecord session_from_row(const Statement& row) {
  return SessionRecord{row.int64_at(0),        row.text_at(1),    row.text_at(2),
                       row.text_at(3),         row.int64_at(4),   row.int64_at(5),
                       row.optional_int64_at(6)};
}

}  // namespace

Result<SessionRecord> SessionsRepo::create(const NewSession& session) {
  std::int64_t id = 0;
  Status status = db_.write_transaction("creating a session", [&]() -> Status {
    Result<Statement> insert = db_.prepare(kInsertSession);
    if (!insert) return insert.status();
    insert->bind(1, session.title).bind(2, session.system_prompt).bind(3, session.model_path).bind(4, db_.now_ms());
    INFERSCOPE_RETURN_IF_ERROR(insert->run());
    id = db_.last_insert_rowid();
    return Status::ok();
  });
  if (!status) return status;
  return get(id);
}

Result<SessionRecord> SessionsRepo::get(std::int64_t id) {
  Result<Statement> select = db_.prepare(std::string(kSessionColumns) + "WHERE id = ?1");
  if (!select) return select.status();
  select->bind(1, id);
  Result<bool> row = select->step();
  if (!row) return row.status();
  if (!*row) return Status::error(db_.path() + ": no session with id " + std::to_string(id));
  return session_from_row(*select);
}

Result<std::vector<SessionRecord>> SessionsRepo::list() {
  Result<Statement> select =
      db_.prepare(std::string(kSessionColumns) + "WHERE deleted_at IS NULL ORDER BY updated_at DESC, id DESC");
  if (!select) return select.status();
  std::vector<SessionRecord> sessions;
  for (;;) {
    Result<bool> row = select->step();
    if (!row) return row.status();
    if (!*row) return sessions;
    sessions.push_back(session_from_row(*select));
  }
}

Status SessionsRepo::change_one(std::int64_t id, const std::string& what, const char* sql,
                                const std::function<void(Statement&)>& bind) {
  return db_.write_transaction(what, [&]() -> Status {
    Result<Statement> update = db_.prepare(sql);
    if (!update) return update.status();
    bind(*update);
    INFERSCOPE_RETURN_IF_ERROR(update->run());
    if (db_.changed_rows() == 1) return Status::ok();
    return Status::error(db_.path() + ": " + what + ": no session with id " + std::to_string(id) +
                         " in a state that allows it");
  });
}

Status SessionsRepo::rename(std::int64_t id, const std::string& title) {
  return change_one(id, "renaming a session", kRenameSession,
                    [&](Statement& update) { update.bind(1, id).bind(2, title).bind(3, db_.now_ms()); });
}

Status SessionsRepo::set_system_prompt(std::int64_t id, const std::string& system_prompt) {
  return change_one(id, "changing a session's system prompt", kSetSystemPrompt,
                    [&](Statement& update) { update.bind(1, id).bind(2, system_prompt).bind(3, db_.now_ms()); });
}

Status SessionsRepo::soft_delete(std::int64_t id) {
  return change_one(id, "deleting a session", kSoftDeleteSession,
                    [&](Statement& update) { update.bind(1, id).bind(2, db_.now_ms()); });
}

Status SessionsRepo::undo_delete(std::int64_t id) {
  return change_one(id, "undoing a session's deletion", kUndoDeleteSession,
                    [&](Statement& update) { update.bind(1, id); });
}

Result<int> SessionsRepo::purge_deleted() {
  int purged = 0;
  Status status = db_.write_transaction("purging deleted sessions", [&]() -> Status {
    INFERSCOPE_RETURN_IF_ERROR(db_.exec_script(kPurgeDeletedSessions, "purging deleted sessions"));
    purged = db_.changed_rows();
    return Status::ok();
  });
  if (!status) return status;
  return purged;
}

}  // namespace inferscope::store
