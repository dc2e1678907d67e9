// The chat's commands, on the UI thread: send, stop, regenerate, edit-and-resend, copy. Sends the
// conversation so far to EngineController and streams its reply back into the Conversation.
#pragma once

#include <functional>

#include <QObject>
#include <QString>

#include "ui/bridge/reply_stats.h"
#include "ui/bridge/sampling_settings.h"
#include "ui/bridge/semantic_cache_settings.h"

namespace inferscope::ui {

class Conversation;
class EngineController;

class ChatSession : public QObject {
  Q_OBJECT

 public:
  static constexpr int kDefaultMaxTokens = 512;

  ChatSession(EngineController* engine, Conversation* conversation, QObject* parent = nullptr);

  bool isBusy() const { return m_busy; }
  // Idle and the last message is a finished reply.
  bool canRegenerate() const;
  // Idle and there is a user message to take back.
  bool canEditLast() const;
  QString lastReply() const;
  void setMaxTokens(int maxTokens) { m_maxTokens = maxTokens; }
  // For the next reply on (its maxTokens too).
  void setSampling(const SamplingSettings& sampling);
  // Whether (and how) the semantic cache may answer, from the next reply on.
  void setSemanticCache(const SemanticCacheSettings& settings) { m_semanticCache = settings; }
  // Sent as the first message of every request (none when empty).
  void setSystemPrompt(const QString& prompt) { m_systemPrompt = prompt; }
  const QString& systemPrompt() const { return m_systemPrompt; }
  // Each generation waits until `gate` calls the function it is given (the app passes
  // ChatRecorder::whenCommitted, so a reply starts only once the messages before it are stored).
  // Without one, generations start at once.
  using CommitGate = std::function<void(std::function<void()>)>;
  void setCommitGate(CommitGate gate) { m_gate = std::move(gate); }

  // Adds a user message and asks for a reply; false (nothing done) when busy or text is blank.
  bool send(const QString& text);
  // The streaming reply ends after its current token; its text so far stays.
  void stop();
  // Replaces the last reply with a newly generated one (never one from the semantic cache: the
  // "Run it for real" of a cached reply), which the cache then keeps instead.
  void regenerate();
  // Edit-and-resend: removes the last user message and what follows it, and returns its text.
  QString takeLastUserMessage();

 signals:
  void busyChanged(bool busy);
  void replyFinished(const inferscope::ui::ReplyStats& stats);
  void replyFailed(const QString& message);

 private:
  void startReply(bool skipCacheLookup = false);
  void setBusy(bool busy);
  void onReplyFinished(const ReplyStats& stats);
  void onReplyFailed(const QString& message);

  EngineController* m_engine;
  Conversation* m_conversation;
  int m_maxTokens = kDefaultMaxTokens;
  SamplingSettings m_sampling;
  SemanticCacheSettings m_semanticCache;
  QString m_systemPrompt;
  bool m_busy = false;
  CommitGate m_gate;
  quint64 m_pendingReply = 0;  // the reply waiting at the gate (0: none)
  quint64 m_lastReply = 0;
  bool m_stopPending = false;  // stop() came while the reply waited at the gate
};

}  // namespace inferscope::ui
