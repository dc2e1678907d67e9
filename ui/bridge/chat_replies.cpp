#include "ui/bridge/chat_replies.h"

#include <algorithm>

#include <QFile>

#include "ui/bridge/metrics_sampler.h"
#include "ui/bridge/stream_pacer.h"

namespace inferscope::ui {

namespace {

QString qstr(const std::string& s) { return QString::fromStdString(s); }

// The engine's message as a sentence for the window: its first letter a capital.
QString sentence(const std::string& message) {
  QString s = qstr(message);
  if (!s.isEmpty()) s[0] = s[0].toUpper();
  return s;
}

ReplyStats localStats(const GenerateResult& result, const QString& backend) {
  ReplyStats stats;
  stats.backend = backend;
  stats.tokens = static_cast<int>(result.token_ids.size());
  stats.tokensPerSecond = result.timings.decode_tokens_per_s;
  stats.ttftMs = result.timings.ttft_ms;
  stats.stopReason = qstr(result.stop_reason);
  stats.promptTokens = static_cast<int>(result.prompt_token_ids.size());
  stats.reusedTokens = static_cast<int>(result.reused_tokens);
  stats.draftTokens = static_cast<int>(result.draft_tokens);
  stats.acceptedTokens = static_cast<int>(result.accepted_tokens);
  return stats;
}

ReplyStats cloudStats(const route::CloudReply& reply) {
  ReplyStats stats;
  stats.tokens = static_cast<int>(reply.completion_tokens);
  stats.ttftMs = reply.ttft_ms;
  stats.tokensPerSecond = reply.total_ms > reply.ttft_ms && reply.completion_tokens > 1
                              ? 1000.0 * static_cast<double>(reply.completion_tokens - 1) / (reply.total_ms - reply.ttft_ms)
                              : 0;
  stats.stopReason = reply.finish_reason == "length" ? QStringLiteral("max_tokens") : QStringLiteral("end_of_turn");
  return stats;
}

}  // namespace

// The pipeline's sink: pieces paced into chunks with a measurement each, notices as signals.
class ChatReplies::Sink : public reply::ReplySink {
 public:
  Sink(ChatReplies& replies, ChatModel& chat, const std::function<bool()>& cancelled)
      : m_replies(replies), m_chat(chat), m_cancelled(cancelled) {}

  void answering(const reply::ReplyHead& head) override {
    m_replies.m_draftsWithModel = head.source == reply::ReplySource::Local && m_chat.pipeline->draft_model() &&
                                  m_draftSource == DraftSource::Model;
  }
  bool text(const reply::ReplyPiece& piece) override {
    if (piece.reasoning) {
      m_reasoningPacer.add(piece.text, piece.token >= 0);
      if (m_reasoningPacer.due()) publishReasoning();
      return !m_cancelled();
    }
    if (m_reasoningPacer.has_text()) publishReasoning();  // the thinking ends before the answer shows
    m_pacer.add(piece.text, piece.token >= 0);
    if (m_pacer.due()) publish(m_pacer.take());
    return !m_cancelled();
  }
  void notice(reply::ReplyNotice kind, const std::string& message) override {
    switch (kind) {
      case reply::ReplyNotice::ChatFormat:
        if (m_chat.templateFallbackShown) return;
        m_chat.templateFallbackShown = true;
        emit m_replies.chatTemplateFellBack(qstr(message));
        return;
      case reply::ReplyNotice::RouteFallback:
        emit m_replies.routeNotice(sentence(message) + QLatin1Char('.'));
        return;
      case reply::ReplyNotice::RouteTierFailed:
      case reply::ReplyNotice::CacheGuard:
        return;
      case reply::ReplyNotice::CacheSkipped:
      case reply::ReplyNotice::CacheMemoryOnly:
      case reply::ReplyNotice::CacheNotStored:
        emit m_replies.semanticCacheNotice(sentence(message));
        return;
    }
  }
  bool cancelled() const override { return m_cancelled(); }

  void expectDraft(DraftSource source) { m_draftSource = source; }
  // The text not shown yet, with the reply's last rate.
  void flush(double tokensPerSecond) {
    if (m_reasoningPacer.has_text()) publishReasoning();
    const StreamPacer::Batch rest = m_pacer.take();
    m_replies.publish(m_chat, rest.text, rest.tokens, tokensPerSecond);
  }

 private:
  void publish(const StreamPacer::Batch& batch) { m_replies.publish(m_chat, batch.text, batch.tokens, batch.tokensPerSecond); }
  void publishReasoning() {
    const StreamPacer::Batch batch = m_reasoningPacer.take();
    emit m_replies.reasoning(batch.text, batch.tokens);
  }

  ChatReplies& m_replies;
  ChatModel& m_chat;
  const std::function<bool()>& m_cancelled;
  StreamPacer m_pacer;
  StreamPacer m_reasoningPacer;
  DraftSource m_draftSource = DraftSource::None;
};

void ChatReplies::run(const ChatRequest& request, ChatModel* chat, AppReplyCache& cache,
                      const std::function<bool()>& cancelled) {
  if (cancelled()) {
    emit replyFinished(ReplyStats{0, 0, 0, QStringLiteral("cancelled"), chat ? chat->summary.backendShort : QString()});
    return;
  }
  if (!chat) {
    emit replyFailed(tr("No model is loaded."));
    return;
  }
  m_draftsWithModel = false;  // until this reply runs on the model with its draft
  reply::ReplyPipeline& pipeline = *chat->pipeline;
  if (request.semanticCache.enabled) {
    auto opened = cache.cache();
    if (opened) pipeline.set_cache(*opened);
    else emit semanticCacheNotice(tr("The semantic cache was skipped: %1").arg(qstr(opened.message())));
  }
  const reply::ReplyRequest engineRequest = toReplyRequest(request, *chat);
  Sink sink(*this, *chat, cancelled);
  sink.expectDraft(engineRequest.draft.source);
  m_replyStart = chat->session->executor().profile();
  reply::ReplyResult answered = pipeline.answer(engineRequest, sink);
  const auto* outcome = std::get_if<reply::ReplyOutcome>(&answered);
  const bool local = outcome && outcome->local;
  sink.flush(local ? outcome->local->timings.decode_tokens_per_s : 0);
  if (!outcome) {
    emit replyFailed(sentence(std::get<reply::ReplyError>(answered).message));
    return;
  }
  if (outcome->head.cache) cache.noteScope(outcome->head.cache->scope);
  emit replyFinished(statsOf(*outcome, *chat));
}

// The conversation, its limits and sampling, its draft (a layer-skip draft through at most all
// but one of the model's layers: the setting outlives the model it was chosen for) and the
// semantic cache's settings.
reply::ReplyRequest ChatReplies::toReplyRequest(const ChatRequest& request, const ChatModel& chat) const {
  reply::ReplyRequest r;
  for (const ChatTurn& turn : request.messages) r.messages.push_back({turn.role.toStdString(), turn.content.toStdString()});
  request.sampling.applyTo(r);
  r.max_tokens = request.maxTokens;  // the request's, not the sampling preset's
  if (r.draft.source == DraftSource::LayerSkip) {
    const auto most = static_cast<int32_t>(std::max<int64_t>(1, chat.model->config().n_layer - 1));
    r.draft.layers = std::clamp(r.draft.layers, 1, most);
  }
  const SemanticCacheSettings& c = request.semanticCache;
  r.cache.enabled = c.enabled;
  r.cache.skip_lookup = request.skipCacheLookup;
  semantic::SemanticCacheOptions options;
  options.threshold = static_cast<float>(c.threshold);
  options.guard_enabled = c.guard;
  options.ttl = std::chrono::hours(c.ttlHours);
  options.max_entries = static_cast<std::size_t>(c.maxEntries);
  options.max_bytes = std::int64_t{c.maxMegabytes} << 20;
  r.cache.options = options;
  r.cache.embedding_model = QFile::encodeName(c.embeddingModel).toStdString();
  return r;
}

ReplyStats ChatReplies::statsOf(const reply::ReplyOutcome& outcome, const ChatModel& chat) const {
  const reply::ReplyHead& head = outcome.head;
  ReplyStats stats;
  if (head.source == reply::ReplySource::SemanticCache) {
    const reply::CacheReport& cache = *head.cache;
    stats.stopReason = QStringLiteral("semantic_cache");
    stats.ttftMs = cache.embed_ms + cache.search_ms;
    stats.cacheSimilarity = cache.lookup.hit->similarity;
    stats.cacheMatchedPrompt = qstr(outcome.cached_prompt);
    stats.backend = chat.summary.backendShort;
  } else if (outcome.cloud) {
    stats = cloudStats(*outcome.cloud);
    stats.route = tr("cloud (%1)").arg(qstr(head.cloud_model));
  } else {
    stats = localStats(*outcome.local, chat.summary.backendShort);
    if (head.route) stats.route = head.fallback.empty() ? tr("local") : tr("local (fallback)");
  }
  stats.cacheLookedUp = head.cache && (head.cache->looked_up || head.source == reply::ReplySource::SemanticCache);
  if (head.route) stats.routeReason = qstr(head.route->reason);
  return stats;
}

void ChatReplies::publish(ChatModel& chat, const QString& text, int generated, double tokensPerSecond) {
  if (!text.isEmpty()) emit tokens(text);
  const DraftModel* drafting = m_draftsWithModel ? chat.pipeline->draft_model().get() : nullptr;
  emit metrics(sampleMetrics(*chat.session, m_replyStart, drafting, generated, tokensPerSecond));
}

}  // namespace inferscope::ui
