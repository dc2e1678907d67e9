#include "engine/serve/completion_cache.h"

namespace inferscope::serve {

Result<std::unique_ptr<CompletionCache>> CompletionCache::open(const CompletionCacheOptions& options,
                                                               SharedEmbedder& embedder) {
  auto cache = options.database.empty() ? semantic::SemanticCache::in_memory(options.cache)
                                        : semantic::SemanticCache::open_file(options.database, options.cache);
  if (!cache) return cache.status();
  return std::unique_ptr<CompletionCache>(new CompletionCache(std::move(*cache), embedder));
}

Result<CompletionCache::Probe> CompletionCache::look_up(semantic::CacheScopeInputs scope, const std::string& prompt) {
  auto identity = embedder_.identity();
  if (!identity) return identity.status();
  scope.embedding_model_identity = std::move(*identity);
  Probe probe;
  probe.scope = semantic::cache_scope_key(scope);
  probe.prompt = prompt;
  auto e = embedder_.embed(prompt);
  if (!e) return e.status();
  probe.embedding = std::move(e->values);
  std::lock_guard lock(mutex_);
  auto found = cache_.lookup(probe.scope, probe.prompt, probe.embedding);
  if (!found) return found.status();
  probe.hit = std::move(found->hit);
  return probe;
}

Status CompletionCache::store(const Probe& probe, std::string_view reply) {
  std::lock_guard lock(mutex_);
  auto stored = cache_.insert(probe.scope, probe.prompt, probe.embedding, reply);
  return stored ? Status::ok() : stored.status();
}

semantic::CacheStats CompletionCache::stats() const {
  std::lock_guard lock(mutex_);
  return cache_.stats();
}

}  // namespace inferscope::serve
