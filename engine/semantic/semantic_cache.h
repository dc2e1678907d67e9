// The semantic response cache: a prompt whose embedding is close enough (cosine similarity >=
// threshold) to one answered before, under the same scope key (cache_scope.h), gets that reply
// without running the model, unless the false-hit guard (false_hit_guard.h) sees a difference
// in meaning the vectors blur. Entries expire after a TTL and the least recently used ones are
// evicted beyond an entry count or byte limit.
//
// Persistence: through a store::Store (the app's SQLite file); vectors of a scope are read into
// an in-memory index (adaptive_index.h) on the first lookup or insert in that scope. in_memory()
// keeps nothing; open_file() on a damaged, locked or read-only file runs in memory only and
// notice() says why. Every store failure is a Status; a failed write changes nothing in memory.
// Not thread-safe: one cache per thread, like store::Store.
//
//   auto cache = SemanticCache::open_file(db_path);      // never fails for valid options
//   if (!cache->notice().empty()) tell_user(cache->notice());
//   Result<CacheLookup> found = cache->lookup(scope, prompt, embed(prompt));
//   if (found && found->hit) return found->hit->reply;
//   ... generate ...; cache->insert(scope, prompt, embed(prompt), reply);
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/core/status.h"
#include "engine/semantic/adaptive_index.h"
#include "engine/semantic/cache_ledger.h"
#include "engine/semantic/false_hit_guard.h"
#include "engine/store/store.h"

namespace inferscope::semantic {

struct SemanticCacheOptions {
  static constexpr float kMinThreshold = 0.90f;
  static constexpr float kMaxThreshold = 0.99f;

  float threshold = 0.97f;  // cosine similarity for a hit, in [kMinThreshold, kMaxThreshold]
  std::chrono::milliseconds ttl = std::chrono::hours(24 * 7);  // freshness of an entry
  std::size_t max_entries = 50'000;                             // all scopes together
  std::int64_t max_bytes = std::int64_t{256} << 20;             // prompt + reply + embedding bytes
  bool guard_enabled = true;
  std::size_t candidates = 4;  // nearest entries a lookup examines (the guard may reject some)
  IndexPolicy index;
  std::function<std::int64_t()> now_ms = store::system_now_ms;  // Unix ms; tests inject one
};

// Ok, or an error naming the first field out of range.
Status validate_options(const SemanticCacheOptions& options);

struct CacheHit {
  std::int64_t entry_id = 0;
  float similarity = 0.0f;
  std::string matched_prompt;
  std::string reply;
};

struct GuardRejection {
  std::int64_t entry_id = 0;
  float similarity = 0.0f;
  std::string matched_prompt;
  std::string reason;  // GuardVerdict::reason
};

struct CacheLookup {
  std::optional<CacheHit> hit;
  // The most similar candidate at or above the threshold that the guard turned down (a hit
  // may still have come from a less similar one).
  std::optional<GuardRejection> rejected;
  std::optional<float> nearest_similarity;  // of the nearest entry in the scope, hit or not
};

struct CacheStats {
  std::size_t entries = 0;
  std::int64_t bytes = 0;
  std::int64_t lookups = 0;           // since the cache was opened
  std::int64_t hits = 0;
  std::int64_t guard_rejections = 0;  // candidates at or above the threshold the guard turned down
  double hit_rate() const { return lookups == 0 ? 0.0 : static_cast<double>(hits) / static_cast<double>(lookups); }
};

struct CachedEntry {
  std::int64_t id = 0;
  std::string scope_key;
  std::string prompt;
  std::string reply;
  std::int64_t hits = 0;
  std::int64_t created_at = 0;  // Unix ms
  std::int64_t last_used_at = 0;
  std::int64_t expires_at = 0;
  std::int64_t bytes = 0;
};

class SemanticCache {
 public:
  // Nothing persists.
  static Result<SemanticCache> in_memory(SemanticCacheOptions options = {});
  // Entries live in `store` (not owned; must outlive the cache, same thread; its clock stamps
  // creation times, options.now_ms the rest). An error when its entries cannot be read or it
  // is read-only; the caller may go on with in_memory().
  static Result<SemanticCache> with_store(store::Store& store, SemanticCacheOptions options = {});
  // Opens (or creates) the database at `path` for the cache alone, stamping rows with the
  // cache's clock. A damaged, locked, newer or unreadable file gives a memory-only cache whose
  // notice() says why; the file is not touched. Fails only for invalid options.
  static Result<SemanticCache> open_file(const std::string& path, SemanticCacheOptions options = {},
                                         const store::StoreOptions& store_options = {});

  // The best entry of the scope for `prompt`. embedding: any length, scaled to unit length
  // here; it must have the dimension of the scope's entries. Expired candidates are removed.
  Result<CacheLookup> lookup(const std::string& scope_key, std::string_view prompt, std::span<const float> embedding);
  // Stores a reply; an entry of the scope with the very same prompt is replaced, and expired
  // and least recently used entries make room. Returns the new entry's id.
  Result<std::int64_t> insert(const std::string& scope_key, std::string_view prompt, std::span<const float> embedding,
                              std::string_view reply);
  Status remove(std::int64_t entry_id);
  // Removes the entries still there (one transaction); ids already gone are skipped.
  Status remove_present(const std::vector<std::int64_t>& entry_ids);
  Status invalidate_scope(const std::string& scope_key);
  Status clear();
  // Removes every expired entry now (lookups and inserts also do, as they meet them).
  Result<std::int64_t> purge_expired();
  // Unexpired entries, most recently used first; scope_key nullopt = all scopes; text: found in
  // prompt or reply, ASCII case-insensitive ("" = any).
  Result<std::vector<CachedEntry>> list(const std::optional<std::string>& scope_key, std::string_view text,
                                        std::size_t limit = 1000);

  CacheStats stats() const;
  Status set_threshold(float threshold);
  // New limits: the TTL counts for entries stored from now on; entries beyond the new count or
  // byte limit go at once, least recently used first (with every expired one).
  Status set_retention(std::chrono::milliseconds ttl, std::size_t max_entries, std::int64_t max_bytes);
  void set_guard_enabled(bool enabled) {
    options_.guard_enabled = enabled;
    guard_.set_enabled(enabled);
  }
  const SemanticCacheOptions& options() const { return options_; }
  bool is_persistent() const { return store_ != nullptr; }
  // Why the cache runs in memory only, when open_file could not use its file; else empty.
  const std::string& notice() const { return notice_; }

 private:
  struct PromptReply {
    std::string prompt, reply;
  };
  // A scope whose entries are in memory. `index` is null until the first vector gives the dimension.
  struct LoadedScope {
    std::unique_ptr<AdaptiveIndex> index;
    std::unordered_map<std::int64_t, PromptReply> texts;
  };

  SemanticCache(SemanticCacheOptions options, store::Store* store);
  Status load_ledger();
  // The scope's entries in memory, read from the store on first use; nullptr when the scope has
  // none and there is no store.
  Result<LoadedScope*> loaded_scope(const std::string& scope_key);
  Status index_entry(LoadedScope& scope, std::int64_t id, std::span<const float> unit_vector);
  Result<std::optional<std::int64_t>> same_prompt_entry(LoadedScope& scope, std::span<const float> unit,
                                                        std::string_view prompt);
  // Ends the examination of one candidate: a hit, a guard rejection, or nothing (expired, gone).
  Result<bool> try_candidate(LoadedScope& scope, const Neighbor& candidate, std::string_view prompt, CacheLookup& out);
  // Removes entries from the store (one transaction), then from memory.
  Status drop_entries(const std::vector<std::int64_t>& ids);
  void forget(const std::vector<std::int64_t>& ids);
  CachedEntry cached_entry(std::int64_t id, const LedgerEntry& entry, const PromptReply& texts) const;
  std::vector<CachedEntry> list_in_memory(const std::optional<std::string>& scope_key, std::string_view text,
                                          std::size_t limit) const;

  SemanticCacheOptions options_;
  std::unique_ptr<store::Store> owned_store_;  // open_file's; store_ points into it
  store::Store* store_ = nullptr;              // null: memory only
  std::string notice_;
  FalseHitGuard guard_;
  CacheLedger ledger_;
  std::unordered_map<std::string, LoadedScope> scopes_;
  std::int64_t next_memory_id_ = 1;  // ids when there is no store
  std::int64_t lookups_ = 0, hits_ = 0, guard_rejections_ = 0;
};

}  // namespace inferscope::semantic
