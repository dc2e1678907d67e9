#include "ui/bridge/engine_controller.h"

#include <algorithm>

#include <QFile>
#include <QFileInfo>
#include <QThread>

#include "engine/chat/chat_template.h"
#include "engine/model/model.h"
#include "engine/runtime/session.h"
#include "ui/bridge/chat_prompt.h"
#include "ui/bridge/stream_pacer.h"

namespace inferscope::ui {

namespace {

QString qstr(const std::string& s) { return QString::fromStdString(s); }

int threadsFor(const LoadOptions& options) {
  if (options.threads > 0) return options.threads;
  return std::max(1, QThread::idealThreadCount() - 1);
}

// The file's own template; the plain "User: / Assistant:" format when it has none or when its
// template is beyond what engine/chat supports (then the summary says so).
std::unique_ptr<ChatTemplate> chatTemplateFor(const Model& model, QString& label) {
  auto tmpl = ChatTemplate::from_gguf(model.file(), model.tokenizer());
  if (!tmpl) {
    tmpl = ChatTemplate::from_tokenizer("", model.tokenizer());
    label = QStringLiteral("plain (the file's template is not supported)");
  } else {
    label = tmpl->has_template() ? qstr(chat_family_name(tmpl->family())) : QStringLiteral("plain");
  }
  return tmpl ? std::make_unique<ChatTemplate>(std::move(*tmpl)) : nullptr;
}

ModelSummary summarize(const QString& path, const Model& model, const Session& session, int threads) {
  ModelSummary s;
  s.path = path;
  s.name = model.config().name.empty() ? QFileInfo(path).completeBaseName() : qstr(model.config().name);
  s.architecture = qstr(model.config().arch_name);
  s.fileBytes = static_cast<qint64>(model.file().file_size());
  s.weightsBytes = static_cast<qint64>(model.weights().total_bytes);
  s.contextLength = session.n_ctx();
  s.layers = static_cast<int>(model.config().n_layer);
  s.threads = threads;
  s.backend = QStringLiteral("CPU");
  return s;
}

std::vector<ChatMessage> toEngineMessages(const ChatRequest& request) {
  std::vector<ChatMessage> messages;
  for (const ChatTurn& turn : request.messages) messages.push_back({turn.role.toStdString(), turn.content.toStdString()});
  return messages;
}

ReplyStats toReplyStats(const GenerateResult& result) {
  ReplyStats stats;
  stats.tokens = static_cast<int>(result.token_ids.size());
  stats.tokensPerSecond = result.timings.decode_tokens_per_s;
  stats.ttftMs = result.timings.ttft_ms;
  stats.stopReason = qstr(result.stop_reason);
  return stats;
}

}  // namespace

EngineController::EngineController(QObject* parent) : QObject(parent) {}

EngineController::~EngineController() = default;

void EngineController::loadModel(const QString& path, const LoadOptions& options) {
  QMetaObject::invokeMethod(this, [this, path, options] { runLoad(path, options); }, Qt::QueuedConnection);
}

void EngineController::generate(const ChatRequest& request) {
  const quint64 ticket = ++m_lastTicket;
  emit generateRequested(request);
  QMetaObject::invokeMethod(this, [this, request, ticket] { runGeneration(request, ticket); }, Qt::QueuedConnection);
}

void EngineController::stop() { m_stoppedTicket.store(m_lastTicket.load()); }

void EngineController::runLoad(const QString& path, const LoadOptions& options) {
  ModelLoadOptions modelOptions;
  modelOptions.resident_weights = options.residentWeights;
  modelOptions.n_ctx = options.contextLength;
  modelOptions.n_threads = threadsFor(options);
  if (options.availableMemoryBytes > 0) modelOptions.available_memory_bytes = static_cast<uint64_t>(options.availableMemoryBytes);
  int lastPercent = -1;
  modelOptions.on_progress = [&](double fraction) {
    const int percent = static_cast<int>(fraction * 100);
    if (percent == lastPercent) return;
    lastPercent = percent;
    emit loadProgress(fraction);
  };
  auto model = Model::load(QFile::encodeName(path).toStdString(), modelOptions);
  if (!model) {
    emit loadFailed(qstr(model.message()));
    return;
  }
  QString chatFormat;
  auto chatTemplate = chatTemplateFor(**model, chatFormat);
  if (!chatTemplate) {
    emit loadFailed(tr("%1: no chat format can be built from its tokenizer").arg(path));
    return;
  }
  SessionOptions sessionOptions;
  sessionOptions.n_threads = threadsFor(options);
  sessionOptions.n_ctx = options.contextLength;
  auto session = Session::create(*model, sessionOptions);
  if (!session) {
    emit loadFailed(qstr(session.message()));
    return;
  }
  ModelSummary summary = summarize(path, **model, **session, sessionOptions.n_threads);
  summary.chatFormat = chatFormat;
  m_session = std::move(*session);
  m_model = std::move(*model);
  m_template = std::move(chatTemplate);
  emit modelLoaded(summary);
}

void EngineController::runGeneration(const ChatRequest& request, quint64 ticket) {
  if (stopRequested(ticket)) {
    emit replyFinished(ReplyStats{0, 0, 0, QStringLiteral("cancelled")});
    return;
  }
  if (!m_session) {
    emit replyFailed(tr("No model is loaded."));
    return;
  }
  auto engineRequest = build_chat_request(m_model->tokenizer(), *m_template, toEngineMessages(request),
                                          m_session->n_ctx(), request.maxTokens);
  if (!engineRequest) {
    emit replyFailed(qstr(engineRequest.message()));
    return;
  }
  const int32_t room = engineRequest->max_tokens;  // what build_chat_request left for the reply
  request.sampling.applyTo(*engineRequest);
  engineRequest->max_tokens = room;
  StreamPacer pacer;
  auto result = m_session->generate(*engineRequest, [&](const TokenEvent& event) {
    pacer.add(event.text, event.id >= 0);
    if (pacer.due()) {
      const StreamPacer::Batch batch = pacer.take();
      publish(batch.text, batch.tokens, batch.tokensPerSecond);
    }
    return !stopRequested(ticket);
  });
  const StreamPacer::Batch rest = pacer.take();
  publish(rest.text, rest.tokens, result ? result->timings.decode_tokens_per_s : 0);
  if (!result) {
    emit replyFailed(qstr(result.message()));
    return;
  }
  emit replyFinished(toReplyStats(*result));
}

void EngineController::publish(const QString& text, int generated, double tokensPerSecond) {
  if (!text.isEmpty()) emit tokens(text);
  const MemoryUsage memory = m_session->memory();
  MetricsSample sample;
  sample.decodeTokensPerSecond = tokensPerSecond;
  sample.tokens = generated;
  sample.weightsBytes = memory.weights_bytes;
  sample.kvCacheBytes = memory.kv_cache_bytes;
  sample.scratchBytes = memory.scratch_bytes;
  sample.peakRssBytes = memory.peak_rss_bytes;
  emit metrics(sample);
}

}  // namespace inferscope::ui
