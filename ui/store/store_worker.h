// The app's database on its own thread (see StoreThread): owns the engine's store::Store. Its
// public methods are thread-safe and queue their work on that thread, so the UI thread never
// waits for SQLite; results come back as signals with value types. It keeps the "current
// session": messages go to it, and the first message of a new chat creates it. Work runs in the
// order it was queued, so a message is committed before anything asked for after it.
#pragma once

#include <memory>
#include <optional>

#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>

#include "ui/chat/conversation.h"
#include "ui/store/session_info.h"

namespace inferscope::store {
class Store;
}

namespace inferscope::ui {

class StoreWorker : public QObject {
  Q_OBJECT

 public:
  // `path` empty: $INFERSCOPE_DATABASE, else inferscope.sqlite in the app's data folder.
  explicit StoreWorker(const QString& path, QObject* parent = nullptr);
  ~StoreWorker() override;

  static QString defaultPath();

  // Opens the database: a damaged file is kept as it is and a fresh one is created beside it; a
  // locked or newer one is opened read-only. Both raise a notice.
  void open();
  // The next message starts a new session with this system prompt.
  void newSession(const QString& systemPrompt);
  void selectSession(qint64 id);
  void appendMessage(const inferscope::ui::ConversationMessage& message);
  void replaceLastReply(const inferscope::ui::ConversationMessage& message);
  // Edit-and-resend: the current session keeps its first `count` messages.
  void keepFirst(int count);
  void setSystemPrompt(const QString& systemPrompt);
  void renameSession(qint64 id, const QString& title);
  // Soft delete: undoDelete brings it back until the next start, which purges it.
  void deleteSession(qint64 id);
  void undoDelete(qint64 id);
  // Lists the sessions with a message containing every word of `text` (all when empty).
  void setFilter(const QString& text);
  void savePreset(const QString& name, const QString& json);
  void loadPreset(const QString& name);
  void deletePreset(const QString& name);
  // Emits `synced(ticket)` once every write queued before this call has committed (or failed,
  // or found no database): the barrier ChatRecorder::whenCommitted waits on.
  void sync(quint64 ticket);

 signals:
  void opened(const QString& path, bool readOnly);
  void noticeRaised(const QString& title, const QString& text);
  void failed(const QString& message);
  void sessionsListed(const QList<inferscope::ui::SessionInfo>& sessions);
  void currentSessionChanged(qint64 id);
  void sessionLoaded(const inferscope::ui::SessionInfo& session,
                     const QList<inferscope::ui::ConversationMessage>& messages);
  void messageStored(qint64 sessionId);
  void presetsListed(const QStringList& names);
  void presetLoaded(const QString& name, const QString& json);
  void synced(quint64 ticket);

 private:
  template <typename F>
  void queue(F work);
  void runOpen();
  void runAppend(const ConversationMessage& message);
  void runReplaceLastReply(const ConversationMessage& message);
  bool ensureSession(const ConversationMessage& first);
  void setCurrent(std::optional<qint64> id);
  void listSessions();
  void listPresets();
  // False (and `failed` emitted) when `status` is an error.
  template <typename S>
  bool check(const S& status);

  QString m_path;
  std::unique_ptr<store::Store> m_store;
  std::optional<qint64> m_current;
  QString m_newSessionPrompt;
  QString m_filter;
};

}  // namespace inferscope::ui
