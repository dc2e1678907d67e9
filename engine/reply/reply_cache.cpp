#include "engine/reply/reply_cache.h"

#include <chrono>

namespace inferscope::reply {

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Result<std::unique_ptr<ReplyCache>> ReplyCache::open(const std::string& database,
                                                    const semantic::SemanticCacheOptions& options) {
  auto cache = database.empty() ? semantic::SemanticCache::in_memory(options)
                                : semantic::SemanticCache::open_file(database, options);
  if (!cache) return cache.status();
  return std::unique_ptr<ReplyCache>(new ReplyCache(std::move(*cache)));
}

Result<ReplyCache::Probe> ReplyCache::probe(SharedEmbedder& embedder, semantic::CacheScopeInputs scope,
                                            const std::string& prompt, bool look_up) {
  auto identity = embedder.identity();
  if (!identity) return identity.status();
  scope.embedding_model_identity = std::move(*identity);
  Probe probe;
  probe.scope = semantic::cache_scope_key(scope);
  probe.prompt = prompt;
  auto start = std::chrono::steady_clock::now();
  auto e = embedder.embed(prompt);
  if (!e) return e.status();
  probe.embedding = std::move(e->values);
  probe.embed_ms = ms_since(start);
  if (!look_up) return probe;
  start = std::chrono::steady_clock::now();
  std::lock_guard lock(mutex_);
  auto found = cache_.lookup(probe.scope, probe.prompt, probe.embedding);
  if (!found) return found.status();
  probe.lookup = std::move(*found);
  probe.search_ms = ms_since(start);
  return probe;
}

Status ReplyCache::store(const Probe& probe, std::string_view reply) {
  std::lock_guard lock(mutex_);
  auto stored = cache_.insert(probe.scope, probe.prompt, probe.embedding, reply);
  return stored ? Status::ok() : stored.status();
}

Status ReplyCache::configure(const semantic::SemanticCacheOptions& options) {
  std::lock_guard lock(mutex_);
  INFERSCOPE_RETURN_IF_ERROR(cache_.set_threshold(options.threshold));
  cache_.set_guard_enabled(options.guard_enabled);
  return cache_.set_retention(options.ttl, options.max_entries, options.max_bytes);
}

semantic::CacheStats ReplyCache::stats() const {
  std::lock_guard lock(mutex_);
  return cache_.stats();
}

std::string ReplyCache::notice() const {
  std::lock_guard lock(mutex_);
  return cache_.notice();
}

}  // namespace inferscope::reply
