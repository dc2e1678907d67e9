#include "ui/bridge/engine_controller.h"

#include <algorithm>

#include <QFile>
#include <QFileInfo>
#include <QThread>
#include <QTimer>

#include "engine/chat/chat_template.h"
#include "engine/model/model.h"
#include "engine/weightlab/weight_recipe.h"
#include "engine/chat/chat_prompt.h"
#include "engine/runtime/draft_model.h"
#include "engine/runtime/session.h"
#include "engine/serve/openai_server.h"
#include "ui/bridge/stream_pacer.h"

namespace inferscope::ui {

namespace {

QString qstr(const std::string& s) { return QString::fromStdString(s); }

// On a device the file is read into memory first and then uploaded; the file's progress takes
// this share of the bar, the upload the rest.
constexpr double kFileShareOnDevice = 0.8;

// The threads a conversion on load and the memory estimate use: the chosen count, or every core
// (where the session's automatic threads run, fewer while other programs keep the cores busy).
int threadsFor(const LoadOptions& options) {
  if (options.threads > 0) return options.threads;
  return std::max(1, QThread::idealThreadCount());
}

// "chatml", "llama3", ... for the file's own template; "plain" without one, or when the file's
// template could not be used (ChatTemplate::fallback_reason says why).
QString chatFormatLabel(const ChatTemplate& tmpl) {
  if (!tmpl.fallback_reason().empty()) return QStringLiteral("plain (the file's template is not used)");
  return tmpl.has_template() ? qstr(chat_family_name(tmpl.family())) : QStringLiteral("plain");
}

// Since the reply started: the profile now less the profile then, layer by layer.
QList<QList<double>> replyLayerOpSeconds(const OpProfile& now, const OpProfile& start) {
  QList<QList<double>> layers;
  for (size_t l = 0; l < now.layer_op_seconds.size(); ++l) {
    QList<double> kinds;
    for (size_t k = 0; k < kOpKinds; ++k) {
      const double before = l < start.layer_op_seconds.size() ? start.layer_op_seconds[l][k] : 0.0;
      kinds.append(now.layer_op_seconds[l][k] - before);
    }
    layers.append(kinds);
  }
  return layers;
}

QList<QList<quint64>> replyExpertChoices(const OpProfile& now, const OpProfile& start) {
  QList<QList<quint64>> layers;
  for (size_t l = 0; l < now.expert_choices.size(); ++l) {
    QList<quint64> experts;
    for (size_t e = 0; e < now.expert_choices[l].size(); ++e) {
      const bool known = l < start.expert_choices.size() && e < start.expert_choices[l].size();
      experts.append(now.expert_choices[l][e] - (known ? start.expert_choices[l][e] : 0));
    }
    layers.append(experts);
  }
  return layers;
}

KvBlockCounts toKvBlockCounts(const KvBlockStats& b) { return {b.block_size, b.referenced, b.cached, b.free}; }

ModelSummary summarize(const QString& path, const Model& model, Session& session, const BackendDeviceInfo* device) {
  ModelSummary s;
  s.path = path;
  s.name = model.config().name.empty() ? QFileInfo(path).completeBaseName() : qstr(model.config().name);
  s.architecture = qstr(model.config().arch_name);
  s.fileBytes = static_cast<qint64>(model.file().file_size());
  s.weightsBytes = static_cast<qint64>(model.weights().total_bytes);
  s.contextLength = session.n_ctx();
  s.layers = static_cast<int>(model.config().n_layer);
  s.threads = session.pool().size();
  s.threadsAutomatic = session.pool().adaptive();
  const std::string& backend = session.options().backend.backend;
  s.backendId = backendId(session.options().backend);
  if (backend != kCpuBackend) {
    // "vulkan: <device>", as the executor names itself; the listing's name when it has none.
    const QString name = qstr(session.executor().backend_name());
    const qsizetype colon = name.indexOf(QStringLiteral(": "));
    s.deviceName = colon >= 0 ? name.mid(colon + 2) : (device ? device->name : QString());
    s.deviceMemoryBytes = device ? device->memoryBytes : 0;
  }
  s.backend = backendDisplayName(backend, s.deviceName);
  s.backendShort = backendShortName(backend, s.deviceName);
  const MemoryUsage memory = session.memory();
  s.deviceWeightsBytes = static_cast<qint64>(memory.device_weights_bytes);
  s.kvCacheBytes = static_cast<qint64>(memory.kv_cache_bytes);
  s.kvTypes = memory.kv_types;
  s.kvBlocks = toKvBlockCounts(memory.kv_blocks);
  s.cachePolicy = session.options().cache;
  s.scratchBytes = static_cast<qint64>(memory.scratch_bytes);
  return s;
}

std::vector<ChatMessage> toEngineMessages(const ChatRequest& request) {
  std::vector<ChatMessage> messages;
  for (const ChatTurn& turn : request.messages) messages.push_back({turn.role.toStdString(), turn.content.toStdString()});
  return messages;
}

ReplyStats toReplyStats(const GenerateResult& result, const QString& backend) {
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

void EngineController::setKvTypes(const KvTypes& types) {
  QMetaObject::invokeMethod(this, [this, types] { runSetKvTypes(types); }, Qt::QueuedConnection);
}

void EngineController::runSetKvTypes(const KvTypes& types) {
  if (!m_session) {
    emit kvCacheRefused(tr("No model is loaded."));
    return;
  }
  const Status changed = m_session->set_kv_types(types);
  if (!changed) emit kvCacheRefused(qstr(changed.message()));
  const MemoryUsage memory = m_session->memory();
  emit kvCacheChanged(memory.kv_types, memory.kv_cache_bytes);
  publish(QString(), 0, 0);
}

void EngineController::setCachePolicy(const CachePolicy& policy) {
  QMetaObject::invokeMethod(this, [this, policy] { runSetCachePolicy(policy); }, Qt::QueuedConnection);
}

void EngineController::runSetCachePolicy(const CachePolicy& policy) {
  if (!m_session) {
    emit cachePolicyRefused(tr("No model is loaded."));
    return;
  }
  const Status changed = m_session->set_cache_policy(policy);
  if (!changed) emit cachePolicyRefused(qstr(changed.message()));
  emit cachePolicyChanged(m_session->options().cache);
  publish(QString(), 0, 0);
}

void EngineController::stop() { m_stoppedTicket.store(m_lastTicket.load()); }

void EngineController::saveModelAs(const QString& path) {
  QMetaObject::invokeMethod(
      this,
      [this, path] {
        if (!m_model || m_loadedWeights.isEmpty()) {
          emit saveFailed(tr("The loaded model is not requantized: its file is already on disk."));
          return;
        }
        const Status saved = save_model_as(QFile::encodeName(m_loadedPath).toStdString(), m_loadedWeights.toStdString(),
                                           QFile::encodeName(path).toStdString(), std::max(1, QThread::idealThreadCount()));
        if (saved) emit modelSaved(path);
        else emit saveFailed(qstr(saved.message()));
      },
      Qt::QueuedConnection);
}

void EngineController::runComparison(const ComparisonOptions& options) {
  m_comparisonCancelled.store(false);
  QMetaObject::invokeMethod(
      this,
      [this, options] {
        ComparisonCallbacks callbacks;
        callbacks.cancel = &m_comparisonCancelled;
        callbacks.on_progress = [this](const ComparisonProgress& p) {
          emit comparisonProgress(p.done, p.total, qstr(p.stage));
        };
        auto result = run_comparison(options, callbacks);
        if (!result) emit comparisonFailed(qstr(result.message()));
        else emit comparisonFinished(*result);
      },
      Qt::QueuedConnection);
}

void EngineController::listBackends() {
  QMetaObject::invokeMethod(
      this,
      [this] {
        m_backends = inferscope::ui::listBackends();
        emit backendsListed(m_backends);
      },
      Qt::QueuedConnection);
}

const BackendDeviceInfo* EngineController::findDevice(const BackendChoice& choice) {
  for (const BackendInfo& backend : m_backends) {
    if (backend.backend != choice.backend) continue;
    for (const BackendDeviceInfo& device : backend.devices) {
      if (sameChoice(device.choice, choice)) return &device;
    }
  }
  return nullptr;
}

void EngineController::runLoad(const QString& path, const LoadOptions& options) {
  const bool onDevice = !options.backend.on_cpu();
  const BackendDeviceInfo* device = nullptr;
  QString backendName = backendDisplayName(options.backend.backend, QString());
  if (onDevice) {
    // A fresh listing (tens of ms): a backend without a driver, or a device that is gone, is
    // refused before the file is read, with the engine's reason.
    BackendInfo listed = toBackendInfo(list_backend_devices(options.backend.backend));
    m_backends.erase(std::remove_if(m_backends.begin(), m_backends.end(),
                                    [&](const BackendInfo& b) { return b.backend == listed.backend; }),
                     m_backends.end());
    m_backends.append(listed);
    device = findDevice(options.backend);
    backendName = device ? backendDisplayName(options.backend.backend, device->name)
                         : tr("%1 device %2").arg(backendKindLabel(options.backend.backend)).arg(options.backend.device);
    if (!device) {
      QString reason = listed.unavailableReason;
      if (reason.isEmpty()) {
        QStringList names;
        for (const BackendDeviceInfo& d : listed.devices) names << QStringLiteral("%1 %2").arg(d.choice.device).arg(d.name);
        reason = tr("there is no %1 (the devices are: %2)").arg(backendName, names.join(QStringLiteral(", ")));
      }
      emit backendFailed(backendName, reason);
      return;
    }
  }
  const double fileShare = onDevice ? kFileShareOnDevice : 1.0;
  ModelLoadOptions modelOptions;
  modelOptions.resident_weights = options.residentWeights;
  modelOptions.n_ctx = options.contextLength;
  modelOptions.n_threads = threadsFor(options);
  if (options.availableMemoryBytes > 0) modelOptions.available_memory_bytes = static_cast<uint64_t>(options.availableMemoryBytes);
  int lastPercent = -1;
  modelOptions.on_progress = [&](double fraction) {
    const int percent = static_cast<int>(fraction * fileShare * 100);
    if (percent == lastPercent) return;
    lastPercent = percent;
    emit loadProgress(fraction * fileShare);
  };
  const std::string file = QFile::encodeName(path).toStdString();
  auto model = load_model_as(file, options.weights.toStdString(), modelOptions, modelOptions.n_threads);
  if (!model) {
    emit loadFailed(qstr(model.message()));
    return;
  }
  auto chatTemplate = ChatTemplate::for_chat((*model)->file(), (*model)->tokenizer());
  if (!chatTemplate) {
    emit loadFailed(qstr(chatTemplate.message()));
    return;
  }
  SessionOptions sessionOptions;
  sessionOptions.n_threads = options.threads;  // 0: automatic
  sessionOptions.n_ctx = options.contextLength;
  sessionOptions.backend = options.backend;
  sessionOptions.kv_types = options.kvTypes;
  sessionOptions.cache = options.cache;
  if (onDevice) {
    sessionOptions.on_upload_progress = [&](double fraction) {
      const int percent = static_cast<int>((fileShare + fraction * (1.0 - fileShare)) * 100);
      if (percent == lastPercent) return;
      lastPercent = percent;
      emit loadProgress(fileShare + fraction * (1.0 - fileShare));
    };
  }
  auto session = Session::create(*model, sessionOptions);
  if (!session) {
    if (onDevice) emit backendFailed(backendName, qstr(session.message()));
    else emit loadFailed(qstr(session.message()));
    return;
  }
  if (onDevice) emit loadProgress(1.0);
  ModelSummary summary = summarize(path, **model, **session, device);
  if (!options.weights.isEmpty()) {
    const auto recipe = parse_weight_recipe(options.weights.toStdString());
    summary.name += tr(" (as %1)").arg(recipe ? QString::fromStdString(recipe->label()) : options.weights);
  }
  summary.chatFormat = chatFormatLabel(*chatTemplate);
  summary.chatFormatNotice = qstr(chatTemplate->fallback_reason());
  m_draftModel.reset();  // it runs on the previous session's threads
  m_replyDraftsWithModel = false;
  m_session = std::move(*session);
  m_model = std::move(*model);
  m_template = std::make_unique<ChatTemplate>(std::move(*chatTemplate));
  if (m_replyCache) m_replyCache->modelChanged();
  m_templateFallbackShown = !summary.chatFormatNotice.isEmpty();
  m_backendShort = summary.backendShort;
  m_loadedPath = path;
  m_loadedWeights = options.weights;
  emit modelLoaded(summary);
  if (m_serverSettings.enabled) restartLocalServer();
}

void EngineController::runGeneration(const ChatRequest& request, quint64 ticket) {
  if (stopRequested(ticket)) {
    emit replyFinished(ReplyStats{0, 0, 0, QStringLiteral("cancelled"), m_backendShort});
    return;
  }
  if (!m_session) {
    emit replyFailed(tr("No model is loaded."));
    return;
  }
  m_replyDraftsWithModel = false;  // until this reply runs on the model with its draft
  auto prompt = build_chat_prompt(m_model->tokenizer(), *m_template, toEngineMessages(request), m_session->n_ctx(),
                                  request.maxTokens);
  if (!prompt) {
    emit replyFailed(qstr(prompt.message()));
    return;
  }
  if (!prompt->fallback_reason.empty() && !m_templateFallbackShown) {
    m_templateFallbackShown = true;
    emit chatTemplateFellBack(qstr(prompt->fallback_reason));
  }
  std::optional<ReplyCache::Probe> probe;
  if (request.semanticCache.enabled) probe = lookUpReplyCache(request);
  if (probe && probe->lookup.hit) {
    serveCachedReply(*probe);
    return;
  }
  GenerateRequest& engineRequest = prompt->request;
  const int32_t maxTokens = engineRequest.max_tokens;  // the request's, not the sampling preset's
  request.sampling.applyTo(engineRequest);
  engineRequest.max_tokens = maxTokens;
  const Status drafting = prepareDraft(request.sampling, engineRequest.draft);
  if (!drafting) {
    emit replyFailed(tr("The speculative draft cannot be used: %1").arg(qstr(drafting.message())));
    return;
  }
  const std::optional<route::RouteDecision> decision = routeDecision(request, engineRequest);
  if (decision && decision->tier == route::Tier::Cloud && serveFromCloud(request, *decision)) return;
  m_replyDraftsWithModel = engineRequest.draft.source == DraftSource::Model && engineRequest.draft.model != nullptr;
  StreamPacer pacer;
  m_replyStart = m_session->executor().profile();
  auto result = m_session->generate(engineRequest, [&](const TokenEvent& event) {
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
  if (probe && result->stop_reason != "cancelled") {
    const Status stored = m_replyCache->store(*probe, result->text);
    if (!stored) emit semanticCacheNotice(tr("The reply was not stored in the semantic cache: %1").arg(qstr(stored.message())));
  }
  ReplyStats stats = toReplyStats(*result, m_backendShort);
  stats.cacheLookedUp = probe && !request.skipCacheLookup;
  if (decision) {
    m_router->observe_local_prefill(static_cast<int64_t>(result->prompt_token_ids.size()) - result->reused_tokens,
                                    result->timings.prefill_ms);
    stats.route = decision->tier == route::Tier::Cloud ? tr("local (fallback)") : tr("local");
    stats.routeReason = qstr(decision->reason);
  }
  emit replyFinished(stats);
}

// A layer-skip draft runs through at most all but one of the model's layers (the setting
// outlives the model it was chosen for); a draft model is opened for the session once and kept
// while its file stays the same.
Status EngineController::prepareDraft(const SamplingSettings& settings, DraftOptions& draft) {
  if (draft.source == DraftSource::LayerSkip) {
    const auto most = static_cast<int32_t>(std::max<int64_t>(1, m_model->config().n_layer - 1));
    draft.layers = std::clamp(draft.layers, 1, most);
  }
  if (draft.source != DraftSource::Model) return Status::ok();
  if (settings.draftModelPath.isEmpty()) return Status::error("no draft model file is chosen");
  if (!m_draftModel || m_draftModelPath != settings.draftModelPath) {
    m_draftModel.reset();
    auto model = Model::load(QFile::encodeName(settings.draftModelPath).toStdString());
    if (!model) return model.status();
    auto drafter = DraftModel::create(std::move(*model), m_session->draft_target());
    if (!drafter) return drafter.status();
    m_draftModel = std::move(*drafter);
    m_draftModelPath = settings.draftModelPath;
  }
  draft.model = m_draftModel;
  return Status::ok();
}

ReplyCache& EngineController::replyCache() {
  if (!m_replyCache) m_replyCache = std::make_unique<ReplyCache>(m_databasePath);
  return *m_replyCache;
}

std::optional<ReplyCache::Probe> EngineController::lookUpReplyCache(const ChatRequest& request) {
  auto probe = replyCache().lookUp(request, m_model, *m_session, m_loadedWeights);
  if (!probe) {
    emit semanticCacheNotice(tr("The semantic cache was skipped: %1").arg(qstr(probe.message())));
    return std::nullopt;
  }
  const QString notice = m_replyCache->notice();
  if (!notice.isEmpty()) emit semanticCacheNotice(tr("The semantic cache runs in memory only: %1").arg(notice));
  return std::move(*probe);
}

// The cached reply streams in as one chunk; its stats say where it came from.
void EngineController::serveCachedReply(const ReplyCache::Probe& probe) {
  const semantic::CacheHit& hit = *probe.lookup.hit;
  publish(qstr(hit.reply), 0, 0);
  ReplyStats stats;
  stats.stopReason = QStringLiteral("semantic_cache");
  stats.cacheLookedUp = true;
  stats.ttftMs = probe.lookupMs;
  stats.backend = m_backendShort;
  stats.cacheSimilarity = hit.similarity;
  stats.cacheMatchedPrompt = qstr(hit.matched_prompt);
  emit replyFinished(stats);
}

void EngineController::setDatabasePath(const QString& path) {
  QMetaObject::invokeMethod(this, [this, path] {
    m_databasePath = path;
    m_replyCache.reset();
  }, Qt::QueuedConnection);
}

void EngineController::browseSemanticCache(const CacheBrowseRequest& request) {
  QMetaObject::invokeMethod(this, [this, request] { emit semanticCacheListed(replyCache().browse(request)); },
                            Qt::QueuedConnection);
}

void EngineController::setLocalServer(const LocalServerSettings& settings) {
  QMetaObject::invokeMethod(this, [this, settings] {
    m_serverSettings = settings;
    restartLocalServer();
  }, Qt::QueuedConnection);
}

void EngineController::restartLocalServer() {
  const bool wasServing = m_server != nullptr;
  m_server.reset();
  if (m_serverTicker) m_serverTicker->stop();
  if (!m_serverSettings.enabled || !m_model) {
    if (wasServing || m_serverSettings.enabled) {
      emit localServerChanged({}, m_serverSettings.enabled ? tr("no model is loaded") : QString());
    }
    return;
  }
  serve::ServerOptions options;
  options.port = m_serverSettings.port;
  options.api_key = m_serverSettings.apiKey.toStdString();
  options.session = m_session->options();
  options.session.on_upload_progress = nullptr;
  if (m_serverSettings.semanticCache) {
    options.semantic_cache = serve::CompletionCacheOptions{QFile::encodeName(m_databasePath).toStdString(), {}};
  }
  auto server = serve::OpenAiServer::start(m_model, std::move(options));
  if (!server) {
    emit localServerChanged({}, qstr(server.message()));
    return;
  }
  m_server = std::move(*server);
  if (!m_serverTicker) {
    m_serverTicker = new QTimer(this);
    m_serverTicker->setInterval(1000);
    connect(m_serverTicker, &QTimer::timeout, this, [this] {
      if (m_server) emit localServerRequests(m_server->requests_served());
    });
  }
  m_serverTicker->start();
  emit localServerChanged(QStringLiteral("http://127.0.0.1:%1/v1").arg(m_server->port()), {});
}

void EngineController::setRouting(const QString& configPath) {
  QMetaObject::invokeMethod(this, [this, configPath] {
    m_routeConfig.reset();
    m_router.reset();
    m_clouds.clear();
    if (configPath.isEmpty()) {
      emit routingChanged({}, {});
      return;
    }
    auto config = route::load_route_config(QFile::encodeName(configPath).toStdString());
    if (!config) {
      emit routingChanged({}, qstr(config.message()));
      return;
    }
    m_router = std::make_unique<route::Router>(config->routing);
    QStringList unreachable;
    for (const route::CloudTier& tier : config->clouds) {
      route::CloudClient cloud(tier);
      auto rtt = cloud.probe();
      if (!rtt) {
        unreachable << qstr(rtt.message());
        continue;
      }
      m_router->observe_cloud_rtt(*rtt);
      m_clouds.push_back(std::move(cloud));
    }
    const QString summary = tr("%1, %2 ms threshold, %n cloud tier(s) reachable", nullptr, static_cast<int>(m_clouds.size()))
                                .arg(QString::fromLatin1(route::policy_name(config->routing.policy)))
                                .arg(config->routing.threshold.count());
    m_routeConfig = std::move(*config);
    emit routingChanged(summary, unreachable.join(QStringLiteral("; ")));
  }, Qt::QueuedConnection);
}

std::optional<route::RouteDecision> EngineController::routeDecision(const ChatRequest& request,
                                                                   const GenerateRequest& prompt) {
  if (!m_router) return std::nullopt;
  std::string text;  // every message: a private word anywhere keeps the chat here
  for (const ChatTurn& turn : request.messages) text += turn.content.toStdString() + "\n";
  route::RouteInputs in;
  in.prompt = text;
  in.prompt_tokens = static_cast<int64_t>(
      m_model->tokenizer().encode(prompt.prompt, prompt.add_special, prompt.parse_special).size());
  in.local_available = m_routeConfig->edge.enabled;
  in.cloud_available = !m_clouds.empty();
  return m_router->decide(in);
}

bool EngineController::serveFromCloud(const ChatRequest& request, const route::RouteDecision& decision) {
  route::CloudRequest cloudRequest;
  cloudRequest.messages = toEngineMessages(request);
  cloudRequest.max_tokens = request.maxTokens;
  cloudRequest.temperature = request.sampling.temperature;
  cloudRequest.top_p = request.sampling.topP;
  if (request.sampling.seed) cloudRequest.seed = static_cast<long long>(*request.sampling.seed);
  QString failures;
  for (const route::CloudClient& cloud : m_clouds) {
    StreamPacer pacer;
    bool streamed = false;
    auto reply = cloud.complete(cloudRequest, [&](const std::string& piece) {
      streamed = true;
      pacer.add(piece, true);
      if (pacer.due()) {
        const StreamPacer::Batch batch = pacer.take();
        publish(batch.text, batch.tokens, batch.tokensPerSecond);
      }
      return true;
    });
    const StreamPacer::Batch rest = pacer.take();
    publish(rest.text, rest.tokens, 0);
    if (!reply && streamed) {  // part of the reply is shown: another tier would not continue it
      emit replyFailed(tr("The cloud tier failed in the middle of the reply: %1").arg(qstr(reply.message())));
      return true;
    }
    if (!reply) {
      failures += qstr(reply.message()) + QLatin1Char(' ');
      continue;
    }
    m_router->observe_cloud_rtt(reply->ttft_ms);
    ReplyStats stats;
    stats.tokens = static_cast<int>(reply->completion_tokens);
    stats.ttftMs = reply->ttft_ms;
    stats.tokensPerSecond = reply->total_ms > reply->ttft_ms && reply->completion_tokens > 1
                                ? 1000.0 * static_cast<double>(reply->completion_tokens - 1) / (reply->total_ms - reply->ttft_ms)
                                : 0;
    stats.stopReason = reply->finish_reason == "length" ? QStringLiteral("max_tokens") : QStringLiteral("end_of_turn");
    stats.route = tr("cloud (%1)").arg(qstr(cloud.tier().model));
    stats.routeReason = qstr(decision.reason);
    emit replyFinished(stats);
    return true;
  }
  if (!m_router->fallback_after(route::Tier::Cloud, decision) || !m_routeConfig->edge.enabled) {
    emit replyFailed(tr("The cloud tier failed and routing allows no fallback: %1").arg(failures.trimmed()));
    return true;
  }
  emit routeNotice(tr("The cloud tier failed (%1); the local model answers.").arg(failures.trimmed()));
  return false;
}

void EngineController::publish(const QString& text, int generated, double tokensPerSecond) {
  if (!text.isEmpty()) emit tokens(text);
  const MemoryUsage memory = m_session->memory();
  MetricsSample sample;
  sample.decodeTokensPerSecond = tokensPerSecond;
  sample.tokens = generated;
  sample.weightsBytes = memory.weights_bytes;
  sample.deviceWeightsBytes = memory.device_weights_bytes;
  sample.kvCacheBytes = memory.kv_cache_bytes;
  sample.kvCacheType = qstr(kv_types_label(memory.kv_types));
  sample.kvBlocks = toKvBlockCounts(memory.kv_blocks);
  sample.scratchBytes = memory.scratch_bytes;
  sample.peakRssBytes = memory.peak_rss_bytes;
  if (m_replyDraftsWithModel && m_draftModel) {
    sample.draftModelBytes = m_draftModel->memory_bytes();
    // On a device all of it but the weights' host copy (as weightsBytes is the target's).
    const quint64 hostWeights = m_draftModel->model().weights().total_bytes;
    if (!m_session->options().backend.on_cpu() && sample.draftModelBytes > hostWeights) {
      sample.draftModelDeviceBytes = sample.draftModelBytes - hostWeights;
    }
  }
  const OpProfile& profile = m_session->executor().profile();
  for (size_t k = 0; k < profile.seconds.size(); ++k) {
    sample.opSeconds.append({QString::fromLatin1(op_kind_name(static_cast<OpKind>(k))), profile.seconds[k]});
  }
  sample.layerOpSeconds = replyLayerOpSeconds(profile, m_replyStart);
  sample.expertChoices = replyExpertChoices(profile, m_replyStart);
  emit metrics(sample);
}

}  // namespace inferscope::ui
