// Semantic-cache entries: a prompt's embedding and the response given to it, grouped by scope
// (engine/semantic/cache_scope.h). Only storage; similarity, expiry and eviction policy live in
// engine/semantic/semantic_cache.h, which calls this with its own clock's times.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/status.h"
#include "engine/store/database.h"

namespace inferscope::store {

inline constexpr std::int64_t kNeverExpires = std::numeric_limits<std::int64_t>::max();

struct NewCacheEntry {
  std::string scope_key;
  std::string prompt;
  std::vector<float> embedding;
  std::string response;
  std::int64_t expires_at = kNeverExpires;  // Unix ms
};

struct CacheEntry {
  std::int64_t id = 0;
  std::string scope_key;
  std::string prompt;
  std::vector<float> embedding;
  std::string response;
  std::int64_t hits = 0;
  std::int64_t created_at = 0;    // Unix ms
  std::int64_t last_used_at = 0;  // Unix ms
  std::int64_t expires_at = kNeverExpires;
  std::int64_t bytes = 0;         // cache_entry_bytes
};

// What the cache's bookkeeping needs of every entry: no text, no vector.
struct CacheEntryUsage {
  std::int64_t id = 0;
  std::string scope_key;
  std::int64_t bytes = 0;
  std::int64_t hits = 0;
  std::int64_t created_at = 0;
  std::int64_t last_used_at = 0;
  std::int64_t expires_at = kNeverExpires;
};

struct CacheListQuery {
  std::optional<std::string> scope_key;      // nullopt: every scope
  std::string text;                          // in prompt or response, ASCII case-insensitive; "" = any
  std::optional<std::int64_t> live_at;       // only entries with expires_at > live_at
  std::int64_t limit = 1000;
};

struct CacheTotals {
  std::int64_t entries = 0;
  std::int64_t bytes = 0;
};

// What an entry weighs against the cache's byte limit: UTF-8 prompt and response bytes plus the
// float32 embedding (schema version 5 computes the same for older rows).
std::int64_t cache_entry_bytes(std::string_view prompt, std::string_view response, std::size_t embedding_dims);

class SemanticCacheRepo {
 public:
  explicit SemanticCacheRepo(Database& db) : db_(db) {}

  Result<CacheEntry> insert(const NewCacheEntry& entry);
  // Adds `entry` and deletes `evicted_ids` in one transaction: both happen or neither does.
  Result<CacheEntry> insert(const NewCacheEntry& entry, std::span<const std::int64_t> evicted_ids);
  // Every entry of the scope, oldest first.
  Result<std::vector<CacheEntry>> find_by_scope(const std::string& scope_key);
  // Every entry's bookkeeping, least recently used first.
  Result<std::vector<CacheEntryUsage>> usage();
  // Most recently used first.
  Result<std::vector<CacheEntry>> list(const CacheListQuery& query);
  // One more hit, used at `now_ms`. false when there is no such entry.
  Result<bool> touch(std::int64_t id, std::int64_t now_ms);
  // In one transaction; ids that are not there are skipped.
  Status remove(std::span<const std::int64_t> ids);
  // Entries with expires_at <= now_ms; returns how many.
  Result<std::int64_t> remove_expired(std::int64_t now_ms);
  Result<std::int64_t> remove_scope(const std::string& scope_key);
  Status clear();
  Result<CacheTotals> totals();

 private:
  Result<std::int64_t> remove_where(const char* sql, std::string_view context,
                                    const std::function<void(Statement&)>& bind);

  Database& db_;
};

}  // namespace inferscope::store
