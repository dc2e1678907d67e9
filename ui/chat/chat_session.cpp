#include "ui/chat/chat_session.h"

#include <QPointer>

#include "ui/bridge/engine_controller.h"
#include "ui/chat/conversation.h"

namespace inferscope::ui {

ChatSession::ChatSession(EngineController* engine, Conversation* conversation, QObject* parent)
    : QObject(parent), m_engine(engine), m_conversation(conversation) {
  setObjectName(QStringLiteral("chatSession"));
  connect(engine, &EngineController::tokens, conversation, &Conversation::appendToReply);
  connect(engine, &EngineController::reasoning, conversation, &Conversation::appendReasoning);
  connect(engine, &EngineController::replyFinished, this, &ChatSession::onReplyFinished);
  connect(engine, &EngineController::replyFailed, this, &ChatSession::onReplyFailed);
}

bool ChatSession::canRegenerate() const {
  return !m_busy && m_conversation->size() > 0 &&
         m_conversation->messages().last().role == Conversation::Role::Assistant;
}

bool ChatSession::canEditLast() const { return !m_busy && m_conversation->lastIndexOf(Conversation::Role::User) >= 0; }

QString ChatSession::lastReply() const {
  const int i = m_conversation->lastIndexOf(Conversation::Role::Assistant);
  return i < 0 ? QString() : m_conversation->messages().at(i).text;
}

void ChatSession::setSampling(const SamplingSettings& sampling) {
  m_sampling = sampling;
  m_maxTokens = sampling.maxTokens;
}

bool ChatSession::send(const QString& text) {
  if (m_busy || text.trimmed().isEmpty()) return false;
  m_conversation->addUserMessage(text);
  startReply();
  return true;
}

void ChatSession::stop() {
  if (!m_busy) return;
  if (m_pendingReply != 0) m_stopPending = true;
  else m_engine->stop();
}

void ChatSession::regenerate() {
  if (!canRegenerate()) return;
  m_conversation->truncate(m_conversation->size() - 1);
  startReply(true);
}

QString ChatSession::takeLastUserMessage() {
  if (!canEditLast()) return {};
  const int i = m_conversation->lastIndexOf(Conversation::Role::User);
  const QString text = m_conversation->messages().at(i).text;
  m_conversation->truncate(i);
  return text;
}

void ChatSession::startReply(bool skipCacheLookup) {
  ChatRequest request;
  if (!m_systemPrompt.trimmed().isEmpty()) request.messages.append({QStringLiteral("system"), m_systemPrompt});
  request.messages.append(m_conversation->turns());
  request.maxTokens = m_maxTokens;
  request.sampling = m_sampling;
  request.semanticCache = m_semanticCache;
  request.skipCacheLookup = skipCacheLookup;
  m_conversation->beginReply();
  setBusy(true);
  if (!m_gate) {
    m_engine->generate(request);
    return;
  }
  const quint64 reply = ++m_lastReply;
  m_pendingReply = reply;
  m_stopPending = false;
  m_gate([self = QPointer<ChatSession>(this), reply, request] {
    if (!self || self->m_pendingReply != reply) return;
    self->m_pendingReply = 0;
    // Stopped while waiting: the engine is not asked, and the reply ends as cancelled (as a
    // generation cancelled in the engine's queue does).
    if (self->m_stopPending) {
      self->m_stopPending = false;
      self->onReplyFinished(ReplyStats{0, 0, 0, QStringLiteral("cancelled")});
      return;
    }
    self->m_engine->generate(request);
  });
}

void ChatSession::setBusy(bool busy) {
  if (m_busy == busy) return;
  m_busy = busy;
  emit busyChanged(busy);
}

void ChatSession::onReplyFinished(const ReplyStats& stats) {
  m_conversation->finishReply(stats);
  setBusy(false);
  emit replyFinished(stats);
}

void ChatSession::onReplyFailed(const QString& message) {
  if (m_conversation->hasStreamingReply()) m_conversation->truncate(m_conversation->size() - 1);
  setBusy(false);
  emit replyFailed(message);
}

}  // namespace inferscope::ui
