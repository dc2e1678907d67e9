#include "ui/bridge/engine_controller.h"

#include <algorithm>

#include <QFile>
#include <QThread>

#include "engine/compare/comparison.h"
#include "engine/route/route_config.h"
#include "engine/weightlab/weight_recipe.h"
#include "ui/bridge/chat_replies.h"
#include "ui/bridge/local_server.h"

namespace inferscope::ui {

namespace {

QString qstr(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

EngineController::EngineController(QObject* parent)
    : QObject(parent), m_replies(new ChatReplies(this)), m_server(new LocalServer(this)) {
  connect(m_replies, &ChatReplies::tokens, this, &EngineController::tokens);
  connect(m_replies, &ChatReplies::reasoning, this, &EngineController::reasoning);
  connect(m_replies, &ChatReplies::metrics, this, &EngineController::metrics);
  connect(m_replies, &ChatReplies::replyFinished, this, &EngineController::replyFinished);
  connect(m_replies, &ChatReplies::replyFailed, this, &EngineController::replyFailed);
  connect(m_replies, &ChatReplies::chatTemplateFellBack, this, &EngineController::chatTemplateFellBack);
  connect(m_replies, &ChatReplies::semanticCacheNotice, this, &EngineController::semanticCacheNotice);
  connect(m_replies, &ChatReplies::routeNotice, this, &EngineController::routeNotice);
  connect(m_server, &LocalServer::changed, this, &EngineController::localServerChanged);
  connect(m_server, &LocalServer::requests, this, &EngineController::localServerRequests);
}

// The server and the replies' pipeline go before the model and session they run on.
EngineController::~EngineController() {
  delete m_server;
  m_server = nullptr;
  m_chat.reset();
}

void EngineController::loadModel(const QString& path, const LoadOptions& options) {
  QMetaObject::invokeMethod(this, [this, path, options] { runLoad(path, options); }, Qt::QueuedConnection);
}

void EngineController::runLoad(const QString& path, const LoadOptions& options) {
  auto loaded = loadChatModel(path, options, m_backends, [this](double fraction) { emit loadProgress(fraction); });
  if (auto* failure = std::get_if<LoadFailure>(&loaded)) {
    if (failure->backend) emit backendFailed(failure->backendName, failure->message);
    else emit loadFailed(failure->message);
    return;
  }
  m_replies->modelChanged();
  m_chat = std::move(std::get<std::unique_ptr<ChatModel>>(loaded));
  m_chat->pipeline->set_routing(m_routing);
  emit modelLoaded(m_chat->summary);
  if (m_serverSettings.enabled) m_server->restart(m_serverSettings, m_chat.get(), m_databasePath);
}

void EngineController::generate(const ChatRequest& request) {
  const quint64 ticket = ++m_lastTicket;
  emit generateRequested(request);
  QMetaObject::invokeMethod(this, [this, request, ticket] {
    m_replies->run(request, m_chat.get(), m_cache, [this, ticket] { return stopRequested(ticket); });
  }, Qt::QueuedConnection);
}

void EngineController::stop() { m_stoppedTicket.store(m_lastTicket.load()); }

void EngineController::setKvTypes(const KvTypes& types) {
  QMetaObject::invokeMethod(this, [this, types] { runSetKvTypes(types); }, Qt::QueuedConnection);
}

void EngineController::runSetKvTypes(const KvTypes& types) {
  if (!m_chat) {
    emit kvCacheRefused(tr("No model is loaded."));
    return;
  }
  Session& session = *m_chat->session;
  const Status changed = session.set_kv_types(types);
  if (!changed) emit kvCacheRefused(qstr(changed.message()));
  const MemoryUsage memory = session.memory();
  emit kvCacheChanged(memory.kv_types, memory.kv_cache_bytes + memory.recurrent_bytes);
  m_replies->publish(*m_chat, QString(), 0, 0);
}

void EngineController::setCachePolicy(const CachePolicy& policy) {
  QMetaObject::invokeMethod(this, [this, policy] { runSetCachePolicy(policy); }, Qt::QueuedConnection);
}

void EngineController::runSetCachePolicy(const CachePolicy& policy) {
  if (!m_chat) {
    emit cachePolicyRefused(tr("No model is loaded."));
    return;
  }
  Session& session = *m_chat->session;
  const Status changed = session.set_cache_policy(policy);
  if (!changed) emit cachePolicyRefused(qstr(changed.message()));
  emit cachePolicyChanged(session.options().cache);
  m_replies->publish(*m_chat, QString(), 0, 0);
}

void EngineController::saveModelAs(const QString& path) {
  QMetaObject::invokeMethod(
      this,
      [this, path] {
        if (!m_chat || m_chat->weights.isEmpty()) {
          emit saveFailed(tr("The loaded model is not requantized: its file is already on disk."));
          return;
        }
        const Status saved = save_model_as(QFile::encodeName(m_chat->path).toStdString(), m_chat->weights.toStdString(),
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

void EngineController::setDatabasePath(const QString& path) {
  QMetaObject::invokeMethod(this, [this, path] {
    m_databasePath = path;
    m_cache.setDatabasePath(path);
  }, Qt::QueuedConnection);
}

void EngineController::browseSemanticCache(const CacheBrowseRequest& request) {
  QMetaObject::invokeMethod(this, [this, request] { emit semanticCacheListed(m_cache.browse(request)); },
                            Qt::QueuedConnection);
}

void EngineController::setLocalServer(const LocalServerSettings& settings) {
  QMetaObject::invokeMethod(this, [this, settings] {
    m_serverSettings = settings;
    m_server->restart(m_serverSettings, m_chat.get(), m_databasePath);
  }, Qt::QueuedConnection);
}

void EngineController::setRouting(const QString& configPath) {
  QMetaObject::invokeMethod(this, [this, configPath] { runSetRouting(configPath); }, Qt::QueuedConnection);
}

// The config read and its cloud tiers probed (reply::ReplyRouting), for the loaded model's
// pipeline and every later one.
void EngineController::runSetRouting(const QString& configPath) {
  m_routing.reset();
  if (m_chat) m_chat->pipeline->set_routing(nullptr);
  if (configPath.isEmpty()) {
    emit routingChanged({}, {});
    return;
  }
  auto config = route::load_route_config(QFile::encodeName(configPath).toStdString());
  if (!config) {
    emit routingChanged({}, qstr(config.message()));
    return;
  }
  m_routing = reply::ReplyRouting::create(std::move(*config));
  if (m_chat) m_chat->pipeline->set_routing(m_routing);
  QStringList unreachable;
  for (const std::string& why : m_routing->unreachable()) unreachable << qstr(why);
  const route::RoutingRules& rules = m_routing->config().routing;
  const QString summary = tr("%1, %2 ms threshold, %n cloud tier(s) reachable", nullptr,
                             static_cast<int>(m_routing->reachable()))
                              .arg(QString::fromLatin1(route::policy_name(rules.policy)))
                              .arg(rules.threshold.count());
  emit routingChanged(summary, unreachable.join(QStringLiteral("; ")));
}

}  // namespace inferscope::ui
