// The chat's messages (the model of ChatView): user turns, and assistant replies that grow while
// they stream and end with their statistics. Its signals are the seam for persistence too: a
// message is final when `finished` is emitted (a user turn at once, a reply at its end), and
// `truncated` drops messages from the end (regenerate, edit-and-resend).
#pragma once

#include <optional>

#include <QList>
#include <QObject>
#include <QString>

#include "ui/bridge/chat_request.h"
#include "ui/bridge/reply_stats.h"

namespace inferscope::ui {

struct ConversationMessage {
  enum class Role { User, Assistant };
  Role role = Role::User;
  QString text;
  bool streaming = false;             // a reply still being generated
  std::optional<ReplyStats> stats;    // a finished reply's
  // A reply's thinking before its answer (shown collapsed; not sent back in later turns; saved
  // with the chat), and how many tokens it took.
  QString reasoning;
  int reasoningTokens = 0;
};

class Conversation : public QObject {
  Q_OBJECT

 public:
  using Role = ConversationMessage::Role;

  explicit Conversation(QObject* parent = nullptr);

  const QList<ConversationMessage>& messages() const { return m_messages; }
  int size() const { return static_cast<int>(m_messages.size()); }
  // The finished messages as chat turns, for the engine.
  QList<ChatTurn> turns() const;
  // Index of the last message with this role; -1 when there is none.
  int lastIndexOf(Role role) const;
  bool hasStreamingReply() const { return !m_messages.isEmpty() && m_messages.last().streaming; }

  void addUserMessage(const QString& text);
  void beginReply();
  void appendToReply(const QString& chunk);
  // More of the streaming reply's thinking; `total`: its tokens so far.
  void appendReasoning(const QString& chunk, int total);
  void finishReply(const ReplyStats& stats);
  // Keeps the first `count` messages.
  void truncate(int count);
  // Shows a stored session: the current messages go, these come in (finished, no `finished`
  // signals: they are stored already).
  void replaceAll(const QList<ConversationMessage>& messages);

 signals:
  void messageAdded(int index);
  void messageChanged(int index);
  void messageFinished(int index);
  void truncated(int count);

 private:
  QList<ConversationMessage> m_messages;
};

}  // namespace inferscope::ui

Q_DECLARE_METATYPE(inferscope::ui::ConversationMessage)
