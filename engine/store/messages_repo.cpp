#include "engine/store/messages_repo.h"

namespace inferscope::store {
namespace {

constexpr const char* kMessageColumns =
    "SELECT id, session_id, role, content, created_at, tokens, tokens_per_second, ttft_ms, stop_reason, model, "
    "backend, reasoning, reasoning_tokens FROM messages ";
constexpr const char* kInsertMessage =
    "INSERT INTO messages (session_id, role, content, created_at, tokens, tokens_per_second, ttft_ms, stop_reason, "
    "model, backend, reasoning, reasoning_tokens) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";
constexpr const char* kReplaceMessage =
    "UPDATE messages SET content = ?2, tokens = ?3, tokens_per_second = ?4, ttft_ms = ?5, stop_reason = ?6, "
    "model = ?7, backend = ?8, reasoning = ?9, reasoning_tokens = ?10 WHERE id = ?1";
constexpr const char* kDeleteAfterFirst =
    "DELETE FROM messages WHERE session_id = ?1 AND id NOT IN "
    "(SELECT id FROM messages WHERE session_id = ?1 ORDER BY id LIMIT ?2)";
constexpr const char* kSessionDeletedAt = "SELECT deleted_at FROM sessions WHERE id = ?1";
constexpr const char* kTouchSession = "UPDATE sessions SET updated_at = ?2 WHERE id = ?1";

// Binds stats to the parameters first_index .. first_index + 7.
void bind_stats(Statement& stmt, int first_index, const MessageStats& stats) {
  stmt.bind(first_index, stats.tokens)
      .bind(first_index + 1, stats.tokens_per_second)
      .bind(first_index + 2, stats.ttft_ms)
      .bind(first_index + 3, stats.stop_reason)
      .bind(first_index + 4, stats.model)
      .bind(first_index + 5, stats.backend)
      .bind(first_index + 6, stats.reasoning)
      .bind(first_index + 7, stats.reasoning_tokens);
}

Result<MessageRecord> message_from_row(const Statement& row, const std::string& path) {
  const std::string role_text = row.text_at(2);
  const std::optional<MessageRole> role = role_from_name(role_text);
  if (!role) return Status::error(path + ": message " + std::to_string(row.int64_at(0)) + " has unknown role \"" +
                                  role_text + "\"");
  MessageStats stats{row.optional_int64_at(5), row.optional_double_at(6), row.optional_double_at(7),
                     row.optional_text_at(8),  row.optional_text_at(9),   row.optional_text_at(10),
                     row.optional_text_at(11), row.optional_int64_at(12)};
  return MessageRecord{row.int64_at(0), row.int64_at(1), *role, row.text_at(3), row.int64_at(4), std::move(stats)};
}

}  // namespace

Status MessagesRepo::require_live_session(std::int64_t session_id) {
  Result<Statement> select = db_.prepare(kSessionDeletedAt);
  if (!select) return select.status();
  select->bind(1, session_id);
  Result<bool> row = select->step();
  if (!row) return row.status();
  if (!*row) return Status::error(db_.path() + ": no session with id " + std::to_string(session_id));
  if (select->optional_int64_at(0)) {
    return Status::error(db_.path() + ": session " + std::to_string(session_id) + " is deleted; undo the deletion first");
  }
  return Status::ok();
}

Status MessagesRepo::touch_session(std::int64_t session_id, std::int64_t now) {
  Result<Statement> update = db_.prepare(kTouchSession);
  if (!update) return update.status();
  update->bind(1, session_id).bind(2, now);
  return update->run();
}

Result<MessageRecord> MessagesRepo::last_message(std::int64_t session_id) {
  Result<Statement> select = db_.prepare(std::string(kMessageColumns) + "WHERE session_id = ?1 ORDER BY id DESC LIMIT 1");
  if (!select) return select.status();
  select->bind(1, session_id);
  Result<bool> row = select->step();
  if (!row) return row.status();
  if (!*row) return Status::error(db_.path() + ": session " + std::to_string(session_id) + " has no messages");
  return message_from_row(*select, db_.path());
}

Result<MessageRecord> MessagesRepo::append(std::int64_t session_id, const NewMessage& message) {
  MessageRecord record{0, session_id, message.role, message.content, db_.now_ms(), message.stats};
  Status status = db_.write_transaction("appending a message", [&]() -> Status {
    INFERSCOPE_RETURN_IF_ERROR(require_live_session(session_id));
    Result<Statement> insert = db_.prepare(kInsertMessage);
    if (!insert) return insert.status();
    insert->bind(1, session_id).bind(2, role_name(message.role)).bind(3, message.content).bind(4, record.created_at);
    bind_stats(*insert, 5, message.stats);
    INFERSCOPE_RETURN_IF_ERROR(insert->run());
    record.id = db_.last_insert_rowid();
    return touch_session(session_id, record.created_at);
  });
  if (!status) return status;
  return record;
}

Result<MessageRecord> MessagesRepo::replace_last_assistant(std::int64_t session_id, const std::string& content,
                                                           const MessageStats& stats) {
  MessageRecord record;
  Status status = db_.write_transaction("replacing the last assistant message", [&]() -> Status {
    INFERSCOPE_RETURN_IF_ERROR(require_live_session(session_id));
    Result<MessageRecord> last = last_message(session_id);
    if (!last) return last.status();
    if (last->role != MessageRole::assistant) {
      return Status::error(db_.path() + ": session " + std::to_string(session_id) + " ends with a " +
                           std::string(role_name(last->role)) + " message, not an assistant one to regenerate");
    }
    Result<Statement> update = db_.prepare(kReplaceMessage);
    if (!update) return update.status();
    update->bind(1, last->id).bind(2, content);
    bind_stats(*update, 3, stats);
    INFERSCOPE_RETURN_IF_ERROR(update->run());
    record = std::move(*last);
    record.content = content;
    record.stats = stats;
    return touch_session(session_id, db_.now_ms());
  });
  if (!status) return status;
  return record;
}

Status MessagesRepo::keep_first(std::int64_t session_id, std::int64_t count) {
  return db_.write_transaction("removing the last messages of a session", [&]() -> Status {
    INFERSCOPE_RETURN_IF_ERROR(require_live_session(session_id));
    Result<Statement> remove = db_.prepare(kDeleteAfterFirst);
    if (!remove) return remove.status();
    remove->bind(1, session_id).bind(2, count);
    INFERSCOPE_RETURN_IF_ERROR(remove->run());
    return touch_session(session_id, db_.now_ms());
  });
}

Result<std::vector<MessageRecord>> MessagesRepo::list(std::int64_t session_id) {
  Result<Statement> select = db_.prepare(std::string(kMessageColumns) + "WHERE session_id = ?1 ORDER BY id");
  if (!select) return select.status();
  select->bind(1, session_id);
  std::vector<MessageRecord> messages;
  for (;;) {
    Result<bool> row = select->step();
    if (!row) return row.status();
    if (!*row) return messages;
    Result<MessageRecord> message = message_from_row(*select, db_.path());
    if (!message) return message.status();
    messages.push_back(std::move(*message));
  }
}

}  // namespace inferscope::store
