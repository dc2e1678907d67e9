#include "ui/store/chat_recorder.h"

#include "ui/store/store_worker.h"

namespace inferscope::ui {

ChatRecorder::ChatRecorder(Conversation* conversation, StoreWorker* store, QObject* parent)
    : QObject(parent), m_conversation(conversation), m_store(store) {
  connect(conversation, &Conversation::messageFinished, this, &ChatRecorder::onFinished);
  connect(conversation, &Conversation::truncated, this, &ChatRecorder::onTruncated);
  connect(store, &StoreWorker::synced, this, &ChatRecorder::onSynced);
}

void ChatRecorder::whenCommitted(std::function<void()> then) {
  const quint64 ticket = ++m_lastSync;
  m_waiting.insert(ticket, std::move(then));
  m_store->sync(ticket);
}

void ChatRecorder::onSynced(quint64 ticket) {
  auto then = m_waiting.take(ticket);
  if (then) then();
}

void ChatRecorder::load(const QList<ConversationMessage>& messages) {
  m_loading = true;
  m_conversation->replaceAll(messages);
  m_loading = false;
  m_stored = m_conversation->size();
  m_replaceReply = false;
}

void ChatRecorder::onFinished(int index) {
  const ConversationMessage& message = m_conversation->messages().at(index);
  if (m_replaceReply && message.role == Conversation::Role::Assistant) {
    m_store->replaceLastReply(message);
  } else {
    m_store->appendMessage(message);
  }
  m_replaceReply = false;
  m_stored = index + 1;
}

// Regenerate drops the last stored reply from the Conversation: its successor replaces it.
// Edit-and-resend drops a user message and what follows: the database drops them too.
void ChatRecorder::onTruncated(int count) {
  if (m_loading || count >= m_stored) return;
  const bool droppedStoredReply = count == m_stored - 1 && m_conversation->lastIndexOf(Conversation::Role::User) == count - 1;
  if (droppedStoredReply) {
    m_replaceReply = true;
  } else {
    m_store->keepFirst(count);
  }
  m_stored = count;
}

}  // namespace inferscope::ui
