// The semantic cache as replies use it, for every front end (docs/SEMANTIC-CACHE.md): a question
// is embedded (SharedEmbedder: the chat model's hidden states or a BERT-family file), looked up
// under the scope of its reply (everything that decides it: the model file and its weights,
// the embedding model, the system prompt and the history, the sampling settings, the KV
// configuration, what the request adds), and the reply is stored after a miss. The entries live
// in a SQLite file (the app's database) or, when it cannot be used, in memory (notice()).
// Thread-safe: the server looks up on its HTTP threads and stores on its generation worker.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/status.h"
#include "engine/embedding/shared_embedder.h"
#include "engine/semantic/cache_scope.h"
#include "engine/semantic/semantic_cache.h"

namespace inferscope::reply {

class ReplyCache {
 public:
  // database: a SQLite file, or "" for memory only. A file that cannot be used gives a
  // memory-only cache whose notice() says why.
  static Result<std::unique_ptr<ReplyCache>> open(const std::string& database,
                                                  const semantic::SemanticCacheOptions& options = {});

  // What a question found, and what storing its reply after a miss needs.
  struct Probe {
    std::string scope;
    std::string prompt;
    std::vector<float> embedding;
    semantic::CacheLookup lookup;
    double embed_ms = 0, search_ms = 0;
  };
  // Embeds `prompt` with `embedder` and, when `look_up`, finds the nearest earlier question in
  // `scope` (whose embedding model is filled in here).
  Result<Probe> probe(SharedEmbedder& embedder, semantic::CacheScopeInputs scope, const std::string& prompt,
                      bool look_up);
  Status store(const Probe& probe, std::string_view reply);
  // The threshold, the guard and the retention, for the lookups and stores from now on.
  Status configure(const semantic::SemanticCacheOptions& options);

  semantic::CacheStats stats() const;
  std::string notice() const;
  // fn(cache) with the cache's lock held: the app's cache browser lists and edits the entries.
  template <class F>
  auto with_cache(F&& fn) {
    std::lock_guard lock(mutex_);
    return fn(cache_);
  }

 private:
  explicit ReplyCache(semantic::SemanticCache cache) : cache_(std::move(cache)) {}

  mutable std::mutex mutex_;
  semantic::SemanticCache cache_;
};

}  // namespace inferscope::reply
