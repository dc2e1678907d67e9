// The engine's side of the desktop app, on its own QThread (see EngineThread): commands are
// queued onto that thread and return at once, so the UI thread never waits for the engine;
// results come back as signals carrying value types. A facade over one part per concern: the
// loaded model with its session and reply pipeline (ChatModel), the chat's replies
// (ChatReplies, paced at ~30 Hz), the semantic cache (AppReplyCache), the local server
// (LocalServer), routing (the engine's ReplyRouting), comparisons and conversions.
#pragma once

#include <atomic>
#include <memory>

#include <QList>
#include <QObject>
#include <QString>

#include "engine/reply/reply_routing.h"
#include "ui/bridge/app_reply_cache.h"
#include "ui/bridge/backend_devices.h"
#include "ui/bridge/cache_browse.h"
#include "ui/bridge/chat_model.h"
#include "ui/bridge/chat_request.h"
#include "ui/bridge/comparison_types.h"
#include "ui/bridge/load_options.h"
#include "ui/bridge/local_server_settings.h"
#include "ui/bridge/metrics_sample.h"
#include "ui/bridge/model_summary.h"
#include "ui/bridge/reply_stats.h"

namespace inferscope::ui {

class ChatReplies;
class LocalServer;

class EngineController : public QObject {
  Q_OBJECT

 public:
  explicit EngineController(QObject* parent = nullptr);
  ~EngineController() override;

 public slots:
  // Thread-safe; call them directly from any thread: each queues its work on the controller's
  // thread. A model that fails to load, or whose backend fails to start, leaves the previous
  // one loaded and usable.
  void loadModel(const QString& path, const inferscope::ui::LoadOptions& options);
  // Lists the backends and their devices (backendsListed); it loads backend libraries and
  // creates a Vulkan instance, so it runs on the engine's thread like everything else.
  void listBackends();
  // Writes the loaded model, requantized on load, as a GGUF file (the quantize command's
  // conversion of the same file, so the same bytes): modelSaved or saveFailed.
  void saveModelAs(const QString& path);
  void generate(const inferscope::ui::ChatRequest& request);
  // Ends the running generation after its current token, and cancels the queued ones.
  void stop();
  // Re-creates the loaded session's KV cache with other K/V types (the model stays loaded):
  // kvCacheChanged with what it holds then, after kvCacheRefused when the types were refused
  // (the backend cannot run them, no memory): the previous cache is kept then.
  void setKvTypes(const inferscope::KvTypes& types);
  // The same for the cache policy (block size, prefix budget and cache, window, context shift):
  // cachePolicyChanged with what holds then, after cachePolicyRefused on a refusal.
  void setCachePolicy(const inferscope::CachePolicy& policy);
  // Runs a comparison (engine/compare/comparison.h) on the engine's thread, with models and
  // sessions of its own (the chat's model stays loaded; replies asked for meanwhile wait):
  // comparisonProgress as it goes, then comparisonFinished (cancelled ones too, with what was
  // measured) or comparisonFailed for options it refuses.
  void runComparison(const inferscope::ComparisonOptions& options);
  // The database the semantic cache keeps its entries in (the app's; empty: memory only).
  // Takes effect before the first reply that uses the cache.
  void setDatabasePath(const QString& path);
  // Makes the request's edit to the semantic cache, then lists its entries: semanticCacheListed.
  // Waits, like everything on the engine's thread, for a running reply to end.
  void browseSemanticCache(const inferscope::ui::CacheBrowseRequest& request);
  // Serves the loaded model over the OpenAI API on 127.0.0.1 (engine/serve, a session of its
  // own on the same weights), restarted with every model loaded later; or stops it:
  // localServerChanged. While it runs, localServerRequests about once a second.
  void setLocalServer(const inferscope::ui::LocalServerSettings& settings);
  // Routes the chat's replies between the loaded model and a cloud tier by the deployment config
  // at `configPath` (docs/ROUTING.md); empty: every reply is local. routingChanged says what holds.
  void setRouting(const QString& configPath);
  // Stops a running or queued comparison after its current token (any thread).
  void cancelComparison() { m_comparisonCancelled.store(true); }

 signals:
  // Emitted by generate() on the calling thread as the request is queued (for tests and tracing).
  void generateRequested(const inferscope::ui::ChatRequest& request);
  void loadProgress(double fraction);
  void modelLoaded(const inferscope::ui::ModelSummary& summary);
  // The file could not be loaded (or its session not created on the CPU).
  void loadFailed(const QString& message);
  // The model loaded but its backend could not start on the chosen device (missing library or
  // driver, no such device, device lost, out of device memory). `backend` names it ("Vulkan
  // device 0", "Vulkan: llvmpipe (...)"); `message` is the engine's reason.
  void backendFailed(const QString& backend, const QString& message);
  void backendsListed(const QList<inferscope::ui::BackendInfo>& backends);
  void tokens(const QString& chunk);
  // The model's thinking before its answer (<think> ... </think>); `total`: its tokens so far.
  void reasoning(const QString& chunk, int total);
  void replyFinished(const inferscope::ui::ReplyStats& stats);
  void replyFailed(const QString& message);
  // The file's chat template stopped at one of its limits on this conversation, and the plain
  // format was used instead; once per loaded model (a template refused at load time is
  // reported in ModelSummary::chatFormatNotice instead).
  void chatTemplateFellBack(const QString& reason);
  // The semantic cache could not be used for a reply (which was generated instead), or runs in
  // memory only because the database could not be opened.
  void semanticCacheNotice(const QString& message);
  void semanticCacheListed(const inferscope::ui::CacheListing& listing);
  // `address` ("http://127.0.0.1:8080/v1") while serving, empty when stopped; `error`: why it
  // could not start (the previous server, if any, is stopped).
  void localServerChanged(const QString& address, const QString& error);
  void localServerRequests(qint64 requests);
  // `summary` ("latency_aware, 150 ms, 1 cloud tier reachable") while routing, empty when off;
  // `error`: why the config could not be used (routing is then off).
  void routingChanged(const QString& summary, const QString& error);
  // A cloud tier failed and the local model answered instead (or nothing could).
  void routeNotice(const QString& message);
  void metrics(const inferscope::ui::MetricsSample& sample);
  void kvCacheChanged(const inferscope::KvTypes& types, quint64 bytes);
  void kvCacheRefused(const QString& reason);
  void cachePolicyChanged(const inferscope::CachePolicy& policy);
  void cachePolicyRefused(const QString& reason);
  void modelSaved(const QString& path);
  void saveFailed(const QString& message);
  void comparisonProgress(int done, int total, const QString& stage);
  void comparisonFinished(const inferscope::ComparisonResult& result);
  void comparisonFailed(const QString& message);

 private:
  void runSetKvTypes(const KvTypes& types);
  void runSetCachePolicy(const CachePolicy& policy);
  void runLoad(const QString& path, const LoadOptions& options);
  void runSetRouting(const QString& configPath);
  bool stopRequested(quint64 ticket) const { return ticket <= m_stoppedTicket.load(); }

  std::unique_ptr<ChatModel> m_chat;  // null until a model loads
  QList<BackendInfo> m_backends;       // the last listing (engine thread only)
  AppReplyCache m_cache;
  QString m_databasePath;  // the semantic cache's (engine thread only)
  ChatReplies* m_replies;
  LocalServer* m_server;
  LocalServerSettings m_serverSettings;
  std::shared_ptr<reply::ReplyRouting> m_routing;  // routing on (engine thread only)
  // Generations are numbered as they are requested; stop() cancels every number issued so far.
  std::atomic<quint64> m_lastTicket{0};
  std::atomic<quint64> m_stoppedTicket{0};
  std::atomic<bool> m_comparisonCancelled{false};
};

}  // namespace inferscope::ui
