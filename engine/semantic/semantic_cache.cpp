#include "engine/semantic/semantic_cache.h"

#include <algorithm>
#include <cctype>

#include "engine/semantic/unit_vector.h"

namespace inferscope::semantic {
namespace {

bool contains_ignoring_case(std::string_view haystack, std::string_view needle) {
  auto same = [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  };
  return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(), same) != haystack.end();
}

std::string memory_only_notice(const std::string& path, const std::string& why) {
  return "Semantic cache: " + why + " The cache runs in memory only this session; " + path +
         " is left as it is and nothing is saved to it.";
}

}  // namespace

Status validate_options(const SemanticCacheOptions& options) {
  if (!(options.threshold >= SemanticCacheOptions::kMinThreshold &&
        options.threshold <= SemanticCacheOptions::kMaxThreshold)) {
    return Status::error("semantic cache threshold " + std::to_string(options.threshold) + " is outside [" +
                         std::to_string(SemanticCacheOptions::kMinThreshold) + ", " +
                         std::to_string(SemanticCacheOptions::kMaxThreshold) + "]");
  }
  if (options.ttl.count() <= 0) return Status::error("semantic cache ttl must be positive");
  if (options.max_entries == 0) return Status::error("semantic cache max_entries must be at least 1");
  if (options.max_bytes <= 0) return Status::error("semantic cache max_bytes must be positive");
  if (options.candidates == 0) return Status::error("semantic cache candidates must be at least 1");
  if (!options.now_ms) return Status::error("semantic cache needs a clock (now_ms)");
  return Status::ok();
}

SemanticCache::SemanticCache(SemanticCacheOptions options, store::Store* store)
    : options_(std::move(options)), store_(store), guard_(options_.guard_enabled) {}

Result<SemanticCache> SemanticCache::in_memory(SemanticCacheOptions options) {
  INFERSCOPE_RETURN_IF_ERROR(validate_options(options));
  return SemanticCache(std::move(options), nullptr);
}

Result<SemanticCache> SemanticCache::with_store(store::Store& store, SemanticCacheOptions options) {
  INFERSCOPE_RETURN_IF_ERROR(validate_options(options));
  if (store.is_read_only()) return Status::error(store.path() + " is open read-only; the semantic cache needs to write");
  SemanticCache cache(std::move(options), &store);
  INFERSCOPE_RETURN_IF_ERROR(cache.load_ledger());
  return cache;
}

Result<SemanticCache> SemanticCache::open_file(const std::string& path, SemanticCacheOptions options,
                                               const store::StoreOptions& store_options) {
  Result<SemanticCache> memory_only = in_memory(options);
  if (!memory_only) return memory_only;
  store::StoreOptions stamped_by_cache_clock = store_options;
  stamped_by_cache_clock.now_ms = options.now_ms;
  Result<store::Store> opened = store::Store::open(path, stamped_by_cache_clock);
  if (!opened) {
    memory_only->notice_ = memory_only_notice(path, opened.message() + ".");
    return memory_only;
  }
  auto owned = std::make_unique<store::Store>(std::move(*opened));
  Result<SemanticCache> persistent = with_store(*owned, std::move(options));
  if (!persistent) {
    memory_only->notice_ = memory_only_notice(path, persistent.message() + ".");
    return memory_only;
  }
  persistent->owned_store_ = std::move(owned);
  return persistent;
}

Status SemanticCache::load_ledger() {
  Result<std::vector<store::CacheEntryUsage>> usage = store_->semantic_cache().usage();
  if (!usage) return usage.status();
  for (store::CacheEntryUsage& u : *usage) {
    ledger_.add(u.id, LedgerEntry{std::move(u.scope_key), u.bytes, u.hits, u.created_at, u.last_used_at, u.expires_at});
  }
  return Status::ok();
}

Result<SemanticCache::LoadedScope*> SemanticCache::loaded_scope(const std::string& scope_key) {
  auto found = scopes_.find(scope_key);
  if (found != scopes_.end()) return &found->second;
  if (store_ == nullptr) return static_cast<LoadedScope*>(nullptr);
  Result<std::vector<store::CacheEntry>> entries = store_->semantic_cache().find_by_scope(scope_key);
  if (!entries) return entries.status();
  LoadedScope scope;
  for (store::CacheEntry& e : *entries) {
    Result<std::vector<float>> unit = to_unit_vector(e.embedding);
    if (!unit) return Status::error(store_->path() + ": semantic cache entry " + std::to_string(e.id) + ": " + unit.message());
    INFERSCOPE_RETURN_IF_ERROR(index_entry(scope, e.id, *unit));
    scope.texts.emplace(e.id, PromptReply{std::move(e.prompt), std::move(e.response)});
    // An entry another process added since this cache read the ledger.
    if (ledger_.find(e.id) == nullptr) {
      ledger_.add(e.id, LedgerEntry{scope_key, e.bytes, e.hits, e.created_at, e.last_used_at, e.expires_at});
    }
  }
  return &scopes_.emplace(scope_key, std::move(scope)).first->second;
}

Status SemanticCache::index_entry(LoadedScope& scope, std::int64_t id, std::span<const float> unit_vector) {
  if (!scope.index) scope.index = std::make_unique<AdaptiveIndex>(unit_vector.size(), options_.index);
  return scope.index->add(id, unit_vector);
}

Result<CacheLookup> SemanticCache::lookup(const std::string& scope_key, std::string_view prompt,
                                          std::span<const float> embedding) {
  Result<std::vector<float>> unit = to_unit_vector(embedding);
  if (!unit) return unit.status();
  Result<LoadedScope*> scope = loaded_scope(scope_key);
  if (!scope) return scope.status();
  lookups_ += 1;
  CacheLookup out;
  if (*scope == nullptr || !(*scope)->index) return out;
  Result<std::vector<Neighbor>> nearest = (*scope)->index->search(*unit, options_.candidates);
  if (!nearest) return nearest.status();
  if (!nearest->empty()) out.nearest_similarity = nearest->front().similarity;
  for (const Neighbor& candidate : *nearest) {
    if (!(candidate.similarity >= options_.threshold)) break;
    Result<bool> done = try_candidate(**scope, candidate, prompt, out);
    if (!done) return done.status();
    if (*done) break;
  }
  if (out.hit) hits_ += 1;
  return out;
}

Result<bool> SemanticCache::try_candidate(LoadedScope& scope, const Neighbor& candidate, std::string_view prompt,
                                          CacheLookup& out) {
  const std::int64_t now = options_.now_ms();
  const LedgerEntry* entry = ledger_.find(candidate.id);
  const auto texts = scope.texts.find(candidate.id);
  if (entry == nullptr || texts == scope.texts.end() || entry->expires_at <= now) {
    INFERSCOPE_RETURN_IF_ERROR(drop_entries({candidate.id}));
    return false;
  }
  const PromptReply& cached = texts->second;
  const GuardVerdict verdict = guard_.check(cached.prompt, prompt);
  if (!verdict.accepted) {
    guard_rejections_ += 1;
    if (!out.rejected) out.rejected = GuardRejection{candidate.id, candidate.similarity, cached.prompt, verdict.reason};
    return false;
  }
  if (store_ != nullptr) {
    Result<bool> touched = store_->semantic_cache().touch(candidate.id, now);
    if (!touched) return touched.status();
    if (!*touched) {  // another process removed it
      forget({candidate.id});
      return false;
    }
  }
  ledger_.touch(candidate.id, now);
  out.hit = CacheHit{candidate.id, candidate.similarity, cached.prompt, cached.reply};
  return true;
}

Result<std::optional<std::int64_t>> SemanticCache::same_prompt_entry(LoadedScope& scope, std::span<const float> unit,
                                                                     std::string_view prompt) {
  if (!scope.index) return std::optional<std::int64_t>();
  Result<std::vector<Neighbor>> nearest = scope.index->search(unit, options_.candidates);
  if (!nearest) return nearest.status();
  for (const Neighbor& n : *nearest) {
    const auto texts = scope.texts.find(n.id);
    if (texts != scope.texts.end() && texts->second.prompt == prompt) return std::optional<std::int64_t>(n.id);
  }
  return std::optional<std::int64_t>();
}

Result<std::int64_t> SemanticCache::insert(const std::string& scope_key, std::string_view prompt,
                                           std::span<const float> embedding, std::string_view reply) {
  Result<std::vector<float>> unit = to_unit_vector(embedding);
  if (!unit) return unit.status();
  const std::int64_t bytes = store::cache_entry_bytes(prompt, reply, unit->size());
  if (bytes > options_.max_bytes) {
    return Status::error("semantic cache entry of " + std::to_string(bytes) + " bytes is larger than the cache's limit of " +
                         std::to_string(options_.max_bytes) + " bytes");
  }
  Result<LoadedScope*> found = loaded_scope(scope_key);
  if (!found) return found.status();
  LoadedScope& scope = *found ? **found : scopes_[scope_key];
  if (scope.index && scope.index->size() == 0) scope.index.reset();  // an emptied scope takes any dimension
  if (scope.index && scope.index->dim() != unit->size()) return dimension_mismatch(scope.index->dim(), unit->size());

  Result<std::optional<std::int64_t>> replaced = same_prompt_entry(scope, *unit, prompt);
  if (!replaced) return replaced.status();
  std::vector<std::int64_t> leaving;
  if (replaced->has_value()) leaving.push_back(**replaced);
  const std::int64_t now = options_.now_ms();
  const CacheLimits limits{options_.max_entries, options_.max_bytes};
  for (std::int64_t id : ledger_.victims(bytes, limits, now, leaving)) leaving.push_back(id);

  const std::int64_t expires_at = now + options_.ttl.count();
  LedgerEntry entry{scope_key, bytes, 0, now, now, expires_at};
  std::int64_t id = next_memory_id_;
  if (store_ != nullptr) {
    Result<store::CacheEntry> stored = store_->semantic_cache().insert(
        {scope_key, std::string(prompt), *unit, std::string(reply), expires_at}, leaving);
    if (!stored) return stored.status();
    id = stored->id;
    entry.created_at = entry.last_used_at = stored->created_at;
  } else {
    next_memory_id_ += 1;
  }
  forget(leaving);
  INFERSCOPE_RETURN_IF_ERROR(index_entry(scope, id, *unit));
  scope.texts.emplace(id, PromptReply{std::string(prompt), std::string(reply)});
  ledger_.add(id, std::move(entry));
  return id;
}

Status SemanticCache::drop_entries(const std::vector<std::int64_t>& ids) {
  if (store_ != nullptr) INFERSCOPE_RETURN_IF_ERROR(store_->semantic_cache().remove(ids));
  forget(ids);
  return Status::ok();
}

void SemanticCache::forget(const std::vector<std::int64_t>& ids) {
  for (std::int64_t id : ids) {
    const LedgerEntry* entry = ledger_.find(id);
    if (entry == nullptr) continue;
    auto scope = scopes_.find(entry->scope_key);
    if (scope != scopes_.end()) {
      if (scope->second.index && scope->second.index->contains(id)) (void)scope->second.index->remove(id);
      scope->second.texts.erase(id);
    }
    ledger_.remove(id);
  }
}

Status SemanticCache::remove(std::int64_t entry_id) {
  if (ledger_.find(entry_id) == nullptr) return Status::error("no semantic cache entry " + std::to_string(entry_id));
  return drop_entries({entry_id});
}

Status SemanticCache::remove_present(const std::vector<std::int64_t>& entry_ids) {
  std::vector<std::int64_t> present;
  for (std::int64_t id : entry_ids) {
    if (ledger_.find(id) != nullptr) present.push_back(id);
  }
  return drop_entries(present);
}

Status SemanticCache::invalidate_scope(const std::string& scope_key) {
  if (store_ != nullptr) {
    Result<std::int64_t> removed = store_->semantic_cache().remove_scope(scope_key);
    if (!removed) return removed.status();
  }
  forget(ledger_.ids_of_scope(scope_key));
  scopes_.erase(scope_key);
  return Status::ok();
}

Status SemanticCache::clear() {
  if (store_ != nullptr) INFERSCOPE_RETURN_IF_ERROR(store_->semantic_cache().clear());
  ledger_.clear();
  scopes_.clear();
  return Status::ok();
}

Result<std::int64_t> SemanticCache::purge_expired() {
  const std::int64_t now = options_.now_ms();
  const std::vector<std::int64_t> expired = ledger_.expired(now);
  if (store_ != nullptr) {
    Result<std::int64_t> removed = store_->semantic_cache().remove_expired(now);
    if (!removed) return removed.status();
  }
  forget(expired);
  return static_cast<std::int64_t>(expired.size());
}

CachedEntry SemanticCache::cached_entry(std::int64_t id, const LedgerEntry& entry, const PromptReply& texts) const {
  return CachedEntry{id,         entry.scope_key,    texts.prompt,     texts.reply, entry.hits,
                     entry.created_at, entry.last_used_at, entry.expires_at, entry.bytes};
}

Result<std::vector<CachedEntry>> SemanticCache::list(const std::optional<std::string>& scope_key, std::string_view text,
                                                     std::size_t limit) {
  if (store_ == nullptr) return list_in_memory(scope_key, text, limit);
  store::CacheListQuery query{scope_key, std::string(text), options_.now_ms(), static_cast<std::int64_t>(limit)};
  Result<std::vector<store::CacheEntry>> rows = store_->semantic_cache().list(query);
  if (!rows) return rows.status();
  std::vector<CachedEntry> entries;
  for (store::CacheEntry& r : *rows) {
    entries.push_back(CachedEntry{r.id, std::move(r.scope_key), std::move(r.prompt), std::move(r.response), r.hits,
                                  r.created_at, r.last_used_at, r.expires_at, r.bytes});
  }
  return entries;
}

std::vector<CachedEntry> SemanticCache::list_in_memory(const std::optional<std::string>& scope_key,
                                                       std::string_view text, std::size_t limit) const {
  const std::int64_t now = options_.now_ms();
  std::vector<CachedEntry> entries;
  ledger_.visit_most_recent_first([&](std::int64_t id, const LedgerEntry& entry) {
    if (entries.size() >= limit) return false;
    if (entry.expires_at <= now || (scope_key && entry.scope_key != *scope_key)) return true;
    const auto scope = scopes_.find(entry.scope_key);
    if (scope == scopes_.end()) return true;
    const auto texts = scope->second.texts.find(id);
    if (texts == scope->second.texts.end()) return true;
    if (contains_ignoring_case(texts->second.prompt, text) || contains_ignoring_case(texts->second.reply, text)) {
      entries.push_back(cached_entry(id, entry, texts->second));
    }
    return true;
  });
  return entries;
}

CacheStats SemanticCache::stats() const {
  return CacheStats{ledger_.entries(), ledger_.bytes(), lookups_, hits_, guard_rejections_};
}

Status SemanticCache::set_threshold(float threshold) {
  SemanticCacheOptions changed = options_;
  changed.threshold = threshold;
  INFERSCOPE_RETURN_IF_ERROR(validate_options(changed));
  options_.threshold = threshold;
  return Status::ok();
}

Status SemanticCache::set_retention(std::chrono::milliseconds ttl, std::size_t max_entries, std::int64_t max_bytes) {
  SemanticCacheOptions changed = options_;
  changed.ttl = ttl;
  changed.max_entries = max_entries;
  changed.max_bytes = max_bytes;
  INFERSCOPE_RETURN_IF_ERROR(validate_options(changed));
  // victims() makes room for one more entry of 0 bytes: one slot more than the limit leaves
  // exactly max_entries.
  const CacheLimits room_for_none{max_entries + 1, max_bytes};
  INFERSCOPE_RETURN_IF_ERROR(drop_entries(ledger_.victims(0, room_for_none, options_.now_ms())));
  options_ = std::move(changed);
  return Status::ok();
}

}  // namespace inferscope::semantic
