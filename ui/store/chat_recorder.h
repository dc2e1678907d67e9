// Keeps the current session in the database in step with the Conversation: each finished message
// is appended (a user turn when sent, a reply when it ends, with its statistics), a regenerated
// reply replaces the stored one, and edit-and-resend removes the messages it takes back. Loading a stored session into the Conversation goes
// through here, so those messages are not stored twice.
#pragma once

#include <functional>

#include <QHash>
#include <QObject>

#include "ui/chat/conversation.h"

namespace inferscope::ui {

class StoreWorker;

class ChatRecorder : public QObject {
  Q_OBJECT

 public:
  ChatRecorder(Conversation* conversation, StoreWorker* store, QObject* parent = nullptr);

  void load(const QList<ConversationMessage>& messages);
  // Calls `then` (on this object's thread) once every message recorded so far has been committed
  // to the database, or its write has failed (a read-only or unavailable database reports the
  // failure through StoreWorker::failed and does not hold the chat up).
  void whenCommitted(std::function<void()> then);

 private:
  void onSynced(quint64 ticket);
  void onFinished(int index);
  void onTruncated(int count);

  Conversation* m_conversation;
  StoreWorker* m_store;
  int m_stored = 0;  // messages of the Conversation that are in the database
  bool m_loading = false;
  bool m_replaceReply = false;  // the next finished reply replaces the stored last one
  quint64 m_lastSync = 0;
  QHash<quint64, std::function<void()>> m_waiting;
};

}  // namespace inferscope::ui
