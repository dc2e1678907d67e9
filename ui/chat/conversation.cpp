#include "ui/chat/conversation.h"

namespace inferscope::ui {

Conversation::Conversation(QObject* parent) : QObject(parent) {}

QList<ChatTurn> Conversation::turns() const {
  QList<ChatTurn> turns;
  for (const ConversationMessage& m : m_messages) {
    if (m.streaming) continue;
    turns.append({m.role == Role::User ? QStringLiteral("user") : QStringLiteral("assistant"), m.text});
  }
  return turns;
}

int Conversation::lastIndexOf(Role role) const {
  for (int i = size() - 1; i >= 0; --i) {
    if (m_messages[i].role == role) return i;
  }
  return -1;
}

void Conversation::addUserMessage(const QString& text) {
  m_messages.append({Role::User, text, false, std::nullopt});
  emit messageAdded(size() - 1);
  emit messageFinished(size() - 1);
}

void Conversation::beginReply() {
  m_messages.append({Role::Assistant, QString(), true, std::nullopt});
  emit messageAdded(size() - 1);
}

void Conversation::appendToReply(const QString& chunk) {
  if (!hasStreamingReply()) return;
  m_messages.last().text += chunk;
  emit messageChanged(size() - 1);
}

void Conversation::appendReasoning(const QString& chunk, int total) {
  if (!hasStreamingReply()) return;
  m_messages.last().reasoning += chunk;
  m_messages.last().reasoningTokens = total;
  emit messageChanged(size() - 1);
}

void Conversation::finishReply(const ReplyStats& stats) {
  if (!hasStreamingReply()) return;
  m_messages.last().streaming = false;
  m_messages.last().stats = stats;
  emit messageFinished(size() - 1);
}

void Conversation::truncate(int count) {
  if (count >= size()) return;
  m_messages.resize(count);
  emit truncated(count);
}

void Conversation::replaceAll(const QList<ConversationMessage>& messages) {
  m_messages.clear();
  emit truncated(0);
  for (const ConversationMessage& message : messages) {
    m_messages.append(message);
    m_messages.last().streaming = false;
    emit messageAdded(size() - 1);
  }
}

}  // namespace inferscope::ui
