// The app's local OpenAI-compatible server (engine/serve) on the chat's model, on the engine
// thread: started, restarted on every model loaded later, stopped; while it serves, its request
// count about once a second.
#pragma once

#include <memory>

#include <QObject>
#include <QString>

#include "ui/bridge/chat_model.h"
#include "ui/bridge/local_server_settings.h"

class QTimer;

namespace inferscope::serve {
class OpenAiServer;
}  // namespace inferscope::serve

namespace inferscope::ui {

class LocalServer : public QObject {
  Q_OBJECT

 public:
  explicit LocalServer(QObject* parent = nullptr);
  ~LocalServer() override;

  // Stops the server, then starts it on `chat` (a session of its own on the same weights) when
  // `settings` say so; `database` is where its semantic cache keeps its entries.
  void restart(const LocalServerSettings& settings, const ChatModel* chat, const QString& database);

 signals:
  // `address` ("http://127.0.0.1:8080/v1") while serving, empty when stopped; `error`: why it
  // could not start (the previous server, if any, is stopped).
  void changed(const QString& address, const QString& error);
  void requests(qint64 requests);

 private:
  std::unique_ptr<serve::OpenAiServer> m_server;
  QTimer* m_ticker = nullptr;
};

}  // namespace inferscope::ui
