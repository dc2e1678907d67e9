// The app's database on its own thread (see StoreThread): owns the engine's store::Store. Its
// public methods are thread-safe and queue their work on that thread, so the UI thread never
// waits for SQLite; results come back as signals with value types. It keeps the "current
// session": messages go to it, and the first message of a new chat creates it. Work runs in the
// order it was queued, so a message is committed before anything asked for after it.
//
// Writes go through a WriteQueue: while another program holds a lock on the file they wait in
// memory (with a notice), and a timer saves them once the lock is gone. A new chat's session is
// then not stored yet, so its messages refer to it by a provisional (negative) id until it is.
#pragma once

#include <memory>
#include <optional>

#include <QHash>
#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>

#include "engine/store/store_options.h"
#include "ui/bridge/comparison_types.h"
#include "ui/chat/conversation.h"
#include "ui/store/comparison_run_info.h"
#include "ui/store/session_info.h"
#include "ui/store/write_queue.h"

class QTimer;

namespace inferscope::store {
class Store;
}

namespace inferscope::ui {

class StoreWorker : public QObject {
  Q_OBJECT

 public:
  // How often a database locked by another program is checked for the lock to be gone.
  static constexpr int kLockRetryMs = 2000;

  // `path` empty: $INFERSCOPE_DATABASE, else inferscope.sqlite in the app's data folder.
  explicit StoreWorker(const QString& path, QObject* parent = nullptr);
  ~StoreWorker() override;

  static QString defaultPath();
  // The store's defaults, with the busy timeout from $INFERSCOPE_DATABASE_BUSY_TIMEOUT_MS when set
  // (milliseconds; the default is 5 s).
  static store::StoreOptions optionsFromEnvironment();

  // Opens the database: a damaged file is kept as it is and a fresh one is created beside it; a
  // newer one is opened read-only; a locked one is read as far as the lock allows, its writes
  // wait for the lock. Each raises a notice.
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
  // Comparison runs (benchmark_runs of kind "compare", engine/compare/comparison_record.h):
  // recording one emits comparisonRecorded and lists them again.
  void recordComparison(const inferscope::ComparisonResult& result);
  void listComparisons();
  void loadComparison(qint64 id);
  // Emits `synced(ticket)` once every write queued before this call has committed (or failed, or
  // found no database, or is waiting in memory for another program's lock): the barrier
  // ChatRecorder::whenCommitted waits on.
  void sync(quint64 ticket);
  // A last try, waiting up to the busy timeout, to save writes still waiting for a lock (the
  // StoreThread asks for it before it stops).
  void finishWrites();

 signals:
  void opened(const QString& path, bool readOnly);
  // `details`: the technical message behind it, for the box's Show Details (may be empty).
  void noticeRaised(const QString& title, const QString& text, const QString& details);
  void failed(const QString& message);
  // True when writes start waiting for another program's lock; false once they are all saved.
  void lockChanged(bool locked);
  void sessionsListed(const QList<inferscope::ui::SessionInfo>& sessions);
  void currentSessionChanged(qint64 id);
  void sessionLoaded(const inferscope::ui::SessionInfo& session,
                     const QList<inferscope::ui::ConversationMessage>& messages);
  void messageStored(qint64 sessionId);
  void presetsListed(const QStringList& names);
  void presetLoaded(const QString& name, const QString& json);
  void synced(quint64 ticket);
  void comparisonRecorded(qint64 id);
  void comparisonsListed(const QList<inferscope::ui::ComparisonRunInfo>& runs);
  void comparisonLoaded(qint64 id, const inferscope::ComparisonResult& result);

 private:
  template <typename F>
  void queue(F work);
  // Queues `work(store::Store&)`, a write returning a Status; skipped when no database is open.
  template <typename F>
  void writeToStore(F work);
  void write(WriteQueue::Write write);
  // Runs the queued writes in order; the lock's Status when one meets a lock (it and the rest wait).
  Status runWrites();
  void runOpen();
  void openWhileLocked(const Status& lock);
  bool reopenForWriting();
  void enterLocked(const Status& lock);
  void retryAfterLock();
  void giveUpWaitingWrites(const QString& why);
  qint64 currentOrNewSession(const ConversationMessage& first);
  Status runCreateSession(qint64 provisional, const ConversationMessage& first, const QString& systemPrompt);
  Status runAppend(qint64 session, const ConversationMessage& message);
  // The database id of a session, provisional or not; 0 when it could not be created.
  qint64 storedId(qint64 session) const;
  void setCurrent(std::optional<qint64> id);
  void listSessions();
  void listPresets();
  void runListComparisons();
  std::string nativePath() const;
  // False (and `failed` emitted) when `status` is an error.
  template <typename S>
  bool check(const S& status);

  QString m_path;
  store::StoreOptions m_options;
  std::unique_ptr<store::Store> m_store;
  WriteQueue m_writes;
  bool m_locked = false;  // writes wait for another program's lock
  QTimer* m_lockRetry;
  std::optional<qint64> m_current;  // negative: provisional, its session not stored yet
  qint64 m_lastProvisional = 0;
  QHash<qint64, qint64> m_provisionalIds;  // provisional id -> database id, once created
  QString m_newSessionPrompt;
  QString m_filter;
};

}  // namespace inferscope::ui
