#include "ui/store/store_worker.h"

#include <algorithm>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>

#include "engine/store/store.h"

namespace inferscope::ui {

namespace {

constexpr int kTitleLength = 48;

std::string bytes(const QString& s) { return s.toStdString(); }
QString qstr(const std::string& s) { return QString::fromStdString(s); }

SessionInfo toInfo(const store::SessionRecord& record) {
  return SessionInfo{record.id, qstr(record.title), qstr(record.system_prompt)};
}

// A new session is named after its first message.
QString titleFrom(const QString& text) {
  const QString line = text.simplified();
  return line.size() <= kTitleLength ? line : line.left(kTitleLength - 1) + QChar(0x2026);
}

store::MessageStats toStoreStats(const std::optional<ReplyStats>& stats) {
  store::MessageStats out;
  if (!stats) return out;
  out.tokens = stats->tokens;
  out.tokens_per_second = stats->tokensPerSecond;
  out.ttft_ms = stats->ttftMs;
  out.stop_reason = bytes(stats->stopReason);
  return out;
}

ConversationMessage toMessage(const store::MessageRecord& record) {
  ConversationMessage message;
  message.role = record.role == store::MessageRole::assistant ? ConversationMessage::Role::Assistant
                                                               : ConversationMessage::Role::User;
  message.text = qstr(record.content);
  if (record.stats.tokens) {
    ReplyStats stats;
    stats.tokens = static_cast<int>(*record.stats.tokens);
    stats.tokensPerSecond = record.stats.tokens_per_second.value_or(0);
    stats.ttftMs = record.stats.ttft_ms.value_or(0);
    stats.stopReason = qstr(record.stats.stop_reason.value_or(std::string()));
    message.stats = stats;
  }
  return message;
}

store::NewMessage toNewMessage(const ConversationMessage& message) {
  const bool reply = message.role == ConversationMessage::Role::Assistant;
  return {reply ? store::MessageRole::assistant : store::MessageRole::user, bytes(message.text),
          toStoreStats(message.stats)};
}

}  // namespace

StoreWorker::StoreWorker(const QString& path, QObject* parent)
    : QObject(parent), m_path(path.isEmpty() ? defaultPath() : path) {}

StoreWorker::~StoreWorker() = default;

QString StoreWorker::defaultPath() {
  const QString overridden = qEnvironmentVariable("INFERSCOPE_DATABASE");
  if (!overridden.isEmpty()) return overridden;
  return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/inferscope.sqlite");
}

template <typename F>
void StoreWorker::queue(F work) {
  QMetaObject::invokeMethod(this, std::move(work), Qt::QueuedConnection);
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
  const std::string path = QFile::encodeName(m_path).toStdString();
  auto result = store::Store::open(path);
  QString title = tr("Chat history opened read-only");
  QString notice;
  if (!result && store::store_error_kind(result.status()) == store::StoreErrorKind::damaged) {
    result = store::Store::open_fresh_beside(path);
    title = tr("The chat history database is damaged");
  } else if (!result && store::store_error_kind(result.status()) == store::StoreErrorKind::locked) {
    notice = tr("Another program is writing to the chat history, so it is open read-only: new chats are not "
                "saved until Inferscope is restarted.\n\n%1").arg(qstr(result.message()));
    result = store::Store::open_read_only(path);
  }
  if (!check(result)) return;
  m_store = std::make_unique<store::Store>(std::move(*result));
  if (notice.isEmpty()) notice = qstr(m_store->notice());
  if (!notice.isEmpty()) emit noticeRaised(title, notice);
  if (!m_store->is_read_only()) check(m_store->sessions().purge_deleted());
  emit opened(qstr(m_store->path()), m_store->is_read_only());
  listSessions();
  listPresets();
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
  queue([this, message] { runAppend(message); });
}

void StoreWorker::runAppend(const ConversationMessage& message) {
  if (!m_store) {
    emit failed(tr("no database is open, so this chat is not being saved"));
    return;
  }
  if (!ensureSession(message)) return;
  if (!check(m_store->messages().append(*m_current, toNewMessage(message)))) return;
  emit messageStored(*m_current);
  listSessions();
}

bool StoreWorker::ensureSession(const ConversationMessage& first) {
  if (m_current) return true;
  auto session = m_store->sessions().create({bytes(titleFrom(first.text)), bytes(m_newSessionPrompt), {}});
  if (!check(session)) return false;
  setCurrent(session->id);
  return true;
}

void StoreWorker::replaceLastReply(const ConversationMessage& message) {
  queue([this, message] { runReplaceLastReply(message); });
}

void StoreWorker::runReplaceLastReply(const ConversationMessage& message) {
  if (!m_store || !m_current) return;
  if (!check(m_store->messages().replace_last_assistant(*m_current, bytes(message.text), toStoreStats(message.stats))))
    return;
  emit messageStored(*m_current);
}

void StoreWorker::keepFirst(int count) {
  queue([this, count] {
    if (m_store && m_current) check(m_store->messages().keep_first(*m_current, count));
  });
}

void StoreWorker::setSystemPrompt(const QString& systemPrompt) {
  queue([this, systemPrompt] {
    m_newSessionPrompt = systemPrompt;
    if (m_store && m_current) check(m_store->sessions().set_system_prompt(*m_current, bytes(systemPrompt)));
  });
}

void StoreWorker::renameSession(qint64 id, const QString& title) {
  queue([this, id, title] {
    if (m_store && check(m_store->sessions().rename(id, bytes(title)))) listSessions();
  });
}

void StoreWorker::deleteSession(qint64 id) {
  queue([this, id] {
    if (!m_store || !check(m_store->sessions().soft_delete(id))) return;
    if (m_current == id) setCurrent(std::nullopt);
    listSessions();
  });
}

void StoreWorker::undoDelete(qint64 id) {
  queue([this, id] {
    if (m_store && check(m_store->sessions().undo_delete(id))) listSessions();
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
    if (m_store && check(m_store->presets().save(bytes(name), bytes(json)))) listPresets();
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
    if (m_store && check(m_store->presets().remove(bytes(name)))) listPresets();
  });
}

void StoreWorker::sync(quint64 ticket) {
  queue([this, ticket] { emit synced(ticket); });
}

void StoreWorker::listPresets() {
  auto presets = m_store->presets().list();
  if (!check(presets)) return;
  QStringList names;
  for (const store::Preset& preset : *presets) names.append(qstr(preset.name));
  emit presetsListed(names);
}

}  // namespace inferscope::ui
