// The server's semantic cache (docs/SERVER.md): a completion whose prompt means the same as one
// answered before, under the same scope (the model, the embedding model, the system prompt, the
// earlier messages, the sampling settings, the reply length, the stop strings and the KV
// configuration), gets the stored reply without running the model. The prompt looked up is the
// last user message of a chat, or a text completion's whole prompt.
// Lookups run on the HTTP threads and stores on the generation worker: one mutex serializes the
// cache and its SQLite connection. Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/status.h"
#include "engine/semantic/cache_scope.h"
#include "engine/semantic/semantic_cache.h"
#include "engine/serve/shared_embedder.h"

namespace inferscope::serve {

struct CompletionCacheOptions {
  std::string database;  // the SQLite file (the app's, say); "" = in memory only
  semantic::SemanticCacheOptions cache;
};

class CompletionCache {
 public:
  // A file that cannot be used gives a memory-only cache whose notice() says why. `embedder`
  // must outlive the cache.
  static Result<std::unique_ptr<CompletionCache>> open(const CompletionCacheOptions& options, SharedEmbedder& embedder);

  // What a lookup found, and what storing the reply after a miss needs.
  struct Probe {
    std::string scope;
    std::string prompt;
    std::vector<float> embedding;
    std::optional<semantic::CacheHit> hit;
  };
  // `scope`: everything but the embedding model, which is added here.
  Result<Probe> look_up(semantic::CacheScopeInputs scope, const std::string& prompt);
  Status store(const Probe& probe, std::string_view reply);

  semantic::CacheStats stats() const;
  // Why the cache runs in memory only, when its file could not be used; else empty.
  const std::string& notice() const { return cache_.notice(); }

 private:
  CompletionCache(semantic::SemanticCache cache, SharedEmbedder& embedder)
      : cache_(std::move(cache)), embedder_(embedder) {}

  mutable std::mutex mutex_;
  semantic::SemanticCache cache_;
  SharedEmbedder& embedder_;
};

}  // namespace inferscope::serve
