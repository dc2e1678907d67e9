#include "ui/bridge/local_server.h"

#include <QFile>
#include <QTimer>

#include "engine/serve/openai_server.h"

namespace inferscope::ui {

LocalServer::LocalServer(QObject* parent) : QObject(parent) {}

LocalServer::~LocalServer() = default;

void LocalServer::restart(const LocalServerSettings& settings, const ChatModel* chat, const QString& database) {
  const bool wasServing = m_server != nullptr;
  m_server.reset();
  if (m_ticker) m_ticker->stop();
  if (!settings.enabled || !chat) {
    if (wasServing || settings.enabled) emit changed({}, settings.enabled ? tr("no model is loaded") : QString());
    return;
  }
  serve::ServerOptions options;
  options.port = settings.port;
  options.api_key = settings.apiKey.toStdString();
  options.session = chat->session->options();
  options.session.on_upload_progress = nullptr;
  if (settings.semanticCache) options.semantic_cache = serve::CompletionCacheOptions{QFile::encodeName(database).toStdString(), {}};
  auto server = serve::OpenAiServer::start(chat->model, std::move(options));
  if (!server) {
    emit changed({}, QString::fromStdString(server.message()));
    return;
  }
  m_server = std::move(*server);
  if (!m_ticker) {
    m_ticker = new QTimer(this);
    m_ticker->setInterval(1000);
    connect(m_ticker, &QTimer::timeout, this, [this] {
      if (m_server) emit requests(m_server->requests_served());
    });
  }
  m_ticker->start();
  emit changed(QStringLiteral("http://127.0.0.1:%1/v1").arg(m_server->port()), {});
}

}  // namespace inferscope::ui
