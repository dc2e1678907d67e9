#include "ui/store/store_worker.h"

#include <algorithm>
#include <chrono>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>
#include <QTimer>

#include "engine/compare/comparison_record.h"
#include "engine/store/store.h"
#include "ui/store/write_lock_probe.h"

namespace inferscope::ui {

namespace {

constexpr int kTitleLength = 48;

std::string bytes(const QString& s) { return s.toStdString(); }
QString qstr(const std::string& s) { return QString::fromStdString(s); }

// "baseline vs candidate 1, small · 2 prompts · stories260K.gguf"
QString comparisonTitle(const ComparisonResult& r) {
  QStringList candidates;
  for (size_t i = 1; i < r.configs.size(); ++i) candidates << qstr(r.configs[i].config.label);
  const QString base = r.configs.empty() ? QString() : qstr(r.configs.front().config.label);
  const QString model = QFileInfo(qstr(r.options.default_model)).fileName();
  return QStringLiteral("%1 vs %2 · %3 prompts · %4")
      .arg(base, candidates.join(QStringLiteral(", ")))
      .arg(r.options.prompts.size())
      .arg(model);
}

SessionInfo toInfo(const store::SessionRecord& record) {
  return SessionInfo{record.id, qstr(record.title), qstr(record.system_prompt)};
}

// A new session is named after its first message.
QString titleFrom(const QString& text) {
  const QString line = text.simplified();
  return line.size() <= kTitleLength ? line : line.left(kTitleLength - 1) + QChar(0x2026);
}

// How a message came about, for the database: a reply's stats and its reasoning.
store::MessageStats toStoreStats(const ConversationMessage& message) {
  store::MessageStats out;
  if (!message.reasoning.isEmpty()) {
    out.reasoning = bytes(message.reasoning);
    out.reasoning_tokens = message.reasoningTokens;
  }
  const std::optional<ReplyStats>& stats = message.stats;
  if (!stats) return out;
  out.tokens = stats->tokens;
  out.tokens_per_second = stats->tokensPerSecond;
  out.ttft_ms = stats->ttftMs;
  out.stop_reason = bytes(stats->stopReason);
  if (!stats->backend.isEmpty()) out.backend = bytes(stats->backend);
  return out;
}

ConversationMessage toMessage(const store::MessageRecord& record) {
  ConversationMessage message;
  message.role = record.role == store::MessageRole::assistant ? ConversationMessage::Role::Assistant
                                                               : ConversationMessage::Role::User;
  message.text = qstr(record.content);
  message.reasoning = qstr(record.stats.reasoning.value_or(std::string()));
  message.reasoningTokens = static_cast<int>(record.stats.reasoning_tokens.value_or(0));
  if (record.stats.tokens) {
    ReplyStats stats;
    stats.tokens = static_cast<int>(*record.stats.tokens);
    stats.tokensPerSecond = record.stats.tokens_per_second.value_or(0);
    stats.ttftMs = record.stats.ttft_ms.value_or(0);
    stats.stopReason = qstr(record.stats.stop_reason.value_or(std::string()));
    stats.backend = qstr(record.stats.backend.value_or(std::string()));
    message.stats = stats;
  }
  return message;
}

template <typename T>
Status statusOf(const Result<T>& result) {
  return result.status();
}

bool isLocked(const Status& status) { return store::store_error_kind(status) == store::StoreErrorKind::locked; }

store::NewMessage toNewMessage(const ConversationMessage& message) {
  const bool reply = message.role == ConversationMessage::Role::Assistant;
  return {reply ? store::MessageRole::assistant : store::MessageRole::user, bytes(message.text),
          toStoreStats(message)};
}

}  // namespace

StoreWorker::StoreWorker(const QString& path, QObject* parent)
    : QObject(parent),
      m_path(path.isEmpty() ? defaultPath() : path),
      m_options(optionsFromEnvironment()),
      m_lockRetry(new QTimer(this)) {
  m_lockRetry->setInterval(kLockRetryMs);
  connect(m_lockRetry, &QTimer::timeout, this, &StoreWorker::retryAfterLock);
}

StoreWorker::~StoreWorker() = default;

QString StoreWorker::defaultPath() {
  const QString overridden = qEnvironmentVariable("INFERSCOPE_DATABASE");
  if (!overridden.isEmpty()) return overridden;
  return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/inferscope.sqlite");
}

store::StoreOptions StoreWorker::optionsFromEnvironment() {
  store::StoreOptions options;
  bool valid = false;
  const int ms = qEnvironmentVariableIntValue("INFERSCOPE_DATABASE_BUSY_TIMEOUT_MS", &valid);
  if (valid && ms >= 0) options.busy_timeout = std::chrono::milliseconds(ms);
  return options;
}

std::string StoreWorker::nativePath() const { return QFile::encodeName(m_path).toStdString(); }

template <typename F>
void StoreWorker::queue(F work) {
  QMetaObject::invokeMethod(this, std::move(work), Qt::QueuedConnection);
}

template <typename F>
void StoreWorker::writeToStore(F work) {
  write([this, work = std::move(work)]() -> Status { return m_store ? work(*m_store) : Status::ok(); });
}

template <typename S>
bool StoreWorker::check(const S& status) {
  if (status) return true;
  emit failed(qstr(status.message()));
  return false;
}

void StoreWorker::open() {
  queue([this] { runOpen(); });
}

void StoreWorker::runOpen() {
  QDir().mkpath(QFileInfo(m_path).absolutePath());
  const std::string path = nativePath();
  auto result = store::Store::open(path, m_options);
  QString title = tr("Chat history opened read-only");
  if (!result && store::store_error_kind(result.status()) == store::StoreErrorKind::damaged) {
    result = store::Store::open_fresh_beside(path, m_options);
    title = tr("The chat history database is damaged");
  } else if (!result && isLocked(result.status())) {
    openWhileLocked(result.status());
    return;
  }
  if (!check(result)) return;
  m_store = std::make_unique<store::Store>(std::move(*result));
  const QString notice = qstr(m_store->notice());
  if (!notice.isEmpty()) emit noticeRaised(title, notice, QString());
  emit opened(qstr(m_store->path()), m_store->is_read_only());
  listSessions();  // soft-deleted sessions are never listed, so the purge can come after
  listPresets();
  // The first write: a file another program holds locked shows here, after the busy timeout.
  if (m_store->is_read_only()) return;
  writeToStore([](store::Store& store) { return statusOf(store.sessions().purge_deleted()); });
}

// The lock came before the file could be opened for writing: show what can be read (nothing,
// when the lock keeps readers out too) and let the writes wait.
void StoreWorker::openWhileLocked(const Status& lock) {
  enterLocked(lock);
  auto readOnly = store::Store::open_read_only(nativePath(), m_options);
  if (!readOnly) return;
  m_store = std::make_unique<store::Store>(std::move(*readOnly));
  emit opened(qstr(m_store->path()), true);
  listSessions();
  listPresets();
}

// Replaces a store opened read-only because of a lock; false while the lock is still there.
bool StoreWorker::reopenForWriting() {
  auto reopened = store::Store::open(nativePath(), m_options);
  if (!reopened) {
    if (!isLocked(reopened.status())) giveUpWaitingWrites(qstr(reopened.message()));
    return false;
  }
  m_store = std::make_unique<store::Store>(std::move(*reopened));
  emit opened(qstr(m_store->path()), m_store->is_read_only());
  listSessions();
  listPresets();
  return true;
}

// Runs now unless writes already wait for a lock: then it waits behind them.
void StoreWorker::write(WriteQueue::Write write) {
  m_writes.push(std::move(write));
  if (m_locked) return;
  const Status lock = runWrites();
  if (!lock) enterLocked(lock);
}

Status StoreWorker::runWrites() {
  return m_writes.drain([this](const Status& failure) { emit failed(qstr(failure.message())); });
}

void StoreWorker::enterLocked(const Status& lock) {
  m_lockRetry->start();
  if (m_locked) return;
  m_locked = true;
  emit lockChanged(true);
  emit noticeRaised(tr("The chat history is locked by another program"),
                    tr("Another program holds a lock on the chat history database, so Inferscope cannot save to "
                       "it right now. You can go on chatting: new messages are kept in this window and saved as "
                       "soon as the lock is released (checked every few seconds). Nothing already stored is "
                       "changed or deleted.\n\nIf you quit before the lock is released, the messages not saved "
                       "yet are lost."),
                    qstr(lock.message()));
}

// The timer's tick while locked: a quick look at the lock first, so a tick never waits for it.
void StoreWorker::retryAfterLock() {
  if (!m_locked || !writeLockIsFree(nativePath())) return;
  if ((!m_store || m_store->is_read_only()) && !reopenForWriting()) return;
  if (!runWrites()) return;  // taken again meanwhile: the next tick tries again
  m_locked = false;
  m_lockRetry->stop();
  emit lockChanged(false);
}

// The file turned into something the writes cannot go to (damaged, say): they are dropped, saying so.
void StoreWorker::giveUpWaitingWrites(const QString& why) {
  const int dropped = static_cast<int>(m_writes.size());
  emit failed(tr("%n change(s) waiting for the lock could not be saved: %1", "", dropped).arg(why));
  m_writes.clear();
  m_locked = false;
  m_lockRetry->stop();
  emit lockChanged(false);
}

void StoreWorker::finishWrites() {
  queue([this] {
    if (!m_locked || m_writes.empty()) return;
    if ((!m_store || m_store->is_read_only()) && !reopenForWriting()) return;
    const Status lock = runWrites();
    if (lock) return;
    const int lost = static_cast<int>(m_writes.size());
    emit failed(tr("%n change(s) could not be saved before quitting: %1", "", lost).arg(qstr(lock.message())));
  });
}

void StoreWorker::newSession(const QString& systemPrompt) {
  queue([this, systemPrompt] {
    m_newSessionPrompt = systemPrompt;
    setCurrent(std::nullopt);
  });
}

void StoreWorker::selectSession(qint64 id) {
  queue([this, id] {
    if (!m_store) return;
    auto session = m_store->sessions().get(id);
    auto messages = m_store->messages().list(id);
    if (!check(session) || !check(messages)) return;
    QList<ConversationMessage> loaded;
    for (const store::MessageRecord& record : *messages) loaded.append(toMessage(record));
    setCurrent(id);
    emit sessionLoaded(toInfo(*session), loaded);
  });
}

void StoreWorker::appendMessage(const ConversationMessage& message) {
  queue([this, message] {
    const qint64 session = currentOrNewSession(message);
    write([this, session, message] { return runAppend(session, message); });
  });
}

qint64 StoreWorker::currentOrNewSession(const ConversationMessage& first) {
  if (m_current) return *m_current;
  const qint64 provisional = --m_lastProvisional;
  m_current = provisional;  // not announced: until it is stored, the sidebar shows a new chat
  write([this, provisional, first, prompt = m_newSessionPrompt] {
    return runCreateSession(provisional, first, prompt);
  });
  return provisional;
}

Status StoreWorker::runCreateSession(qint64 provisional, const ConversationMessage& first,
                                     const QString& systemPrompt) {
  auto created = m_store ? m_store->sessions().create({bytes(titleFrom(first.text)), bytes(systemPrompt), {}})
                         : Result<store::SessionRecord>::error(
                               bytes(tr("no database is open, so this chat is not being saved")));
  if (!created) {
    // A lock keeps it waiting; after any other failure the chat's next message tries again.
    if (!isLocked(created.status()) && m_current == provisional) m_current.reset();
    return created.status();
  }
  m_provisionalIds.insert(provisional, created->id);
  if (m_current == provisional) setCurrent(created->id);
  return Status::ok();
}

Status StoreWorker::runAppend(qint64 session, const ConversationMessage& message) {
  const qint64 id = storedId(session);
  if (id == 0 || !m_store) return Status::ok();  // the session could not be created: reported then
  auto appended = m_store->messages().append(id, toNewMessage(message));
  if (!appended) return appended.status();
  emit messageStored(id);
  listSessions();
  return Status::ok();
}

qint64 StoreWorker::storedId(qint64 session) const {
  return session > 0 ? session : m_provisionalIds.value(session, 0);
}

void StoreWorker::replaceLastReply(const ConversationMessage& message) {
  queue([this, message] {
    if (!m_current) return;
    writeToStore([this, session = *m_current, message](store::Store& store) -> Status {
      const qint64 id = storedId(session);
      if (id == 0) return Status::ok();
      auto replaced = store.messages().replace_last_assistant(id, bytes(message.text), toStoreStats(message));
      if (replaced) emit messageStored(id);
      return statusOf(replaced);
    });
  });
}

void StoreWorker::keepFirst(int count) {
  queue([this, count] {
    if (!m_current) return;
    writeToStore([this, session = *m_current, count](store::Store& store) -> Status {
      const qint64 id = storedId(session);
      return id == 0 ? Status::ok() : store.messages().keep_first(id, count);
    });
  });
}

void StoreWorker::setSystemPrompt(const QString& systemPrompt) {
  queue([this, systemPrompt] {
    m_newSessionPrompt = systemPrompt;
    if (!m_current) return;
    writeToStore([this, session = *m_current, prompt = bytes(systemPrompt)](store::Store& store) -> Status {
      const qint64 id = storedId(session);
      return id == 0 ? Status::ok() : store.sessions().set_system_prompt(id, prompt);
    });
  });
}

void StoreWorker::renameSession(qint64 id, const QString& title) {
  queue([this, id, title] {
    writeToStore([this, id, title = bytes(title)](store::Store& store) -> Status {
      Status renamed = store.sessions().rename(id, title);
      if (renamed) listSessions();
      return renamed;
    });
  });
}

void StoreWorker::deleteSession(qint64 id) {
  queue([this, id] {
    if (m_current == id) setCurrent(std::nullopt);
    writeToStore([this, id](store::Store& store) -> Status {
      Status deleted = store.sessions().soft_delete(id);
      if (deleted) listSessions();
      return deleted;
    });
  });
}

void StoreWorker::undoDelete(qint64 id) {
  queue([this, id] {
    writeToStore([this, id](store::Store& store) -> Status {
      Status restored = store.sessions().undo_delete(id);
      if (restored) listSessions();
      return restored;
    });
  });
}

void StoreWorker::setFilter(const QString& text) {
  queue([this, text] {
    m_filter = text;
    listSessions();
  });
}

void StoreWorker::setCurrent(std::optional<qint64> id) {
  if (m_current == id) return;
  m_current = id;
  emit currentSessionChanged(id.value_or(0));
}

void StoreWorker::listSessions() {
  if (!m_store) return;
  auto sessions = m_store->sessions().list();
  if (!check(sessions)) return;
  QList<SessionInfo> listed;
  if (m_filter.trimmed().isEmpty()) {
    for (const store::SessionRecord& record : *sessions) listed.append(toInfo(record));
  } else {
    auto found = m_store->search().find(bytes(m_filter));
    if (!check(found)) return;
    for (const store::SessionRecord& record : *sessions) {
      if (std::find(found->begin(), found->end(), record.id) != found->end()) listed.append(toInfo(record));
    }
  }
  emit sessionsListed(listed);
}

void StoreWorker::savePreset(const QString& name, const QString& json) {
  queue([this, name, json] {
    writeToStore([this, name = bytes(name), json = bytes(json)](store::Store& store) -> Status {
      Status saved = store.presets().save(name, json);
      if (saved) listPresets();
      return saved;
    });
  });
}

void StoreWorker::loadPreset(const QString& name) {
  queue([this, name] {
    if (!m_store) return;
    auto preset = m_store->presets().load(bytes(name));
    if (check(preset)) emit presetLoaded(name, qstr(preset->settings_json));
  });
}

void StoreWorker::deletePreset(const QString& name) {
  queue([this, name] {
    writeToStore([this, name = bytes(name)](store::Store& store) -> Status {
      Status removed = store.presets().remove(name);
      if (removed) listPresets();
      return removed;
    });
  });
}

void StoreWorker::recordComparison(const ComparisonResult& result) {
  queue([this, result] {
    writeToStore([this, result](store::Store& store) -> Status {
      auto id = record_comparison(store, result);
      if (!id) return id.status();
      emit comparisonRecorded(*id);
      runListComparisons();
      return Status::ok();
    });
  });
}

void StoreWorker::listComparisons() {
  queue([this] { runListComparisons(); });
}

void StoreWorker::runListComparisons() {
  if (!m_store) return;
  auto runs = m_store->benchmark_runs().list(store::kCompareRun);
  if (!check(runs)) return;
  QList<ComparisonRunInfo> infos;
  for (const store::BenchmarkRun& run : *runs) {
    auto result = comparison_from_run(run);
    const QString title = result ? comparisonTitle(*result) : tr("(unreadable: %1)").arg(qstr(result.message()));
    infos.append(ComparisonRunInfo{run.id, run.created_at, title});
  }
  emit comparisonsListed(infos);
}

void StoreWorker::loadComparison(qint64 id) {
  queue([this, id] {
    if (!m_store) return;
    auto run = m_store->benchmark_runs().find(id);
    if (!check(run)) return;
    auto result = comparison_from_run(*run);
    if (check(result)) emit comparisonLoaded(id, *result);
  });
}

void StoreWorker::sync(quint64 ticket) {
  queue([this, ticket] { emit synced(ticket); });
}

void StoreWorker::listPresets() {
  if (!m_store) return;
  auto presets = m_store->presets().list();
  if (!check(presets)) return;
  QStringList names;
  for (const store::Preset& preset : *presets) names.append(qstr(preset.name));
  emit presetsListed(names);
}

}  // namespace inferscope::ui
