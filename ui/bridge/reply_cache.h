// The semantic cache as the chat uses it, on the engine thread (EngineController): the last
// user message embedded by the chat model itself or by the BERT-family file the settings name
// (engine/embedding), looked up under a scope of everything that decides the reply (the model
// file and its weight mix, the embedding model, the system prompt, the conversation before the
// turn, the sampling settings, the KV configuration), and the reply stored after a miss. The
// cache lives in the app's database (its own connection); a database that cannot be used
// leaves it in memory (notice()). The cache browser lists and edits it through browse().
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <QString>

#include "engine/core/status.h"
#include "engine/embedding/embedder.h"
#include "engine/runtime/session.h"
#include "engine/semantic/semantic_cache.h"
#include "ui/bridge/cache_browse.h"
#include "ui/bridge/chat_request.h"

namespace inferscope::ui {

class ReplyCache {
 public:
  explicit ReplyCache(QString databasePath) : m_databasePath(std::move(databasePath)) {}

  // What a lookup found, and what storing the reply after a miss needs.
  struct Probe {
    std::string scope;
    std::string prompt;
    std::vector<float> embedding;
    semantic::CacheLookup lookup;
    double lookupMs = 0;  // embedding the question and searching
  };

  // A new model was loaded: when it was the embedder, its embeddings differ (the embedder is
  // made again on first use).
  void modelChanged() {
    if (m_embeddingPath.isEmpty()) m_embedder.reset();
  }
  // `weights`: the loaded model's requantize-on-load mix ("" as stored). With
  // request.skipCacheLookup the question is embedded but not looked up (no hit is counted).
  Result<Probe> lookUp(const ChatRequest& request, std::shared_ptr<const Model> model, const Session& session,
                       const QString& weights);
  Status store(const Probe& probe, const std::string& reply);
  // Why the cache runs in memory only; empty when it uses the database.
  QString notice() const;
  // Makes request.edit, then lists the entries it asks for. Works before any lookup.
  CacheListing browse(const CacheBrowseRequest& request);

 private:
  Status open();
  // The settings' threshold, guard and limits applied, and their embedder made when it changed.
  Status prepare(const SemanticCacheSettings& settings, std::shared_ptr<const Model> model, int threads);
  Status prepareEmbedder(const QString& path, std::shared_ptr<const Model> chatModel, int threads);
  Status edit(const CacheBrowseRequest& request);
  Result<CacheListing> list(const CacheBrowseRequest& request);

  QString m_databasePath;
  std::optional<semantic::SemanticCache> m_cache;
  std::unique_ptr<Embedder> m_embedder;
  QString m_embeddingPath;  // the file m_embedder reads; empty: the chat model
  std::string m_lastScope;  // the last looked-up question's; empty before the first
};

}  // namespace inferscope::ui
