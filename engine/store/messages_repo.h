// Messages of a chat session. Each write is its own transaction, committed before the call
// returns: a finished message survives a crash of the app right after.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/store/database.h"
#include "engine/store/message_role.h"

namespace inferscope::store {

// How a generated message came about; empty for messages the user wrote.
struct MessageStats {
  std::optional<std::int64_t> tokens;
  std::optional<double> tokens_per_second;
  std::optional<double> ttft_ms;
  std::optional<std::string> stop_reason;
  std::optional<std::string> model;
  std::optional<std::string> backend;
  // A thinking model's reasoning before its answer (engine/chat/reasoning_split), and its tokens.
  std::optional<std::string> reasoning;
  std::optional<std::int64_t> reasoning_tokens;
};

struct NewMessage {
  MessageRole role = MessageRole::user;
  std::string content;
  MessageStats stats;
};

struct MessageRecord {
  std::int64_t id = 0;
  std::int64_t session_id = 0;
  MessageRole role = MessageRole::user;
  std::string content;
  std::int64_t created_at = 0;  // Unix ms
  MessageStats stats;
};

class MessagesRepo {
 public:
  explicit MessagesRepo(Database& db) : db_(db) {}

  // Adds a finished message to a live (not deleted) session and moves the session to the top.
  Result<MessageRecord> append(std::int64_t session_id, const NewMessage& message);
  // Regenerate: replaces content and stats of the session's last message, which must be the
  // assistant's.
  Result<MessageRecord> replace_last_assistant(std::int64_t session_id, const std::string& content,
                                               const MessageStats& stats);
  // Edit-and-resend: keeps the session's first `count` messages and removes the rest.
  Status keep_first(std::int64_t session_id, std::int64_t count);
  // In the order they were appended.
  Result<std::vector<MessageRecord>> list(std::int64_t session_id);

 private:
  Status require_live_session(std::int64_t session_id);
  Status touch_session(std::int64_t session_id, std::int64_t now);
  Result<MessageRecord> last_message(std::int64_t session_id);

  Database& db_;
};

}  // namespace inferscope::store
