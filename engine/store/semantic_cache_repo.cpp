#include "engine/store/semantic_cache_repo.h"

#include <cstring>

namespace inferscope::store {
namespace {

constexpr const char* kInsertEntry =
    "INSERT INTO semantic_cache (scope_key, prompt, embedding, response, created_at, last_used_at, expires_at, bytes) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7)";
constexpr const char* kEntryColumns =
    "SELECT id, scope_key, prompt, embedding, response, hits, created_at, last_used_at, expires_at, bytes "
    "FROM semantic_cache ";
constexpr const char* kEntriesOfScope = "WHERE scope_key = ?1 ORDER BY id";
constexpr const char* kListedEntries =
    "WHERE (?1 IS NULL OR scope_key = ?1) "
    "AND (?2 = '' OR instr(lower(prompt), lower(?2)) > 0 OR instr(lower(response), lower(?2)) > 0) "
    "AND (?3 IS NULL OR expires_at > ?3) "
    "ORDER BY last_used_at DESC, id DESC LIMIT ?4";
constexpr const char* kUsage =
    "SELECT id, scope_key, bytes, hits, created_at, last_used_at, expires_at FROM semantic_cache "
    "ORDER BY last_used_at, id";
constexpr const char* kTouch = "UPDATE semantic_cache SET hits = hits + 1, last_used_at = ?2 WHERE id = ?1";
constexpr const char* kDeleteEntry = "DELETE FROM semantic_cache WHERE id = ?1";
constexpr const char* kDeleteExpired = "DELETE FROM semantic_cache WHERE expires_at <= ?1";
constexpr const char* kDeleteScope = "DELETE FROM semantic_cache WHERE scope_key = ?1";
constexpr const char* kDeleteAll = "DELETE FROM semantic_cache";
constexpr const char* kTotals = "SELECT count(*), coalesce(sum(bytes), 0) FROM semantic_cache";

// The BLOB holds the floats in this machine's byte order (the database never leaves it).
Result<std::vector<float>> embedding_from_blob(const std::vector<std::uint8_t>& blob, std::int64_t id,
                                               const std::string& path) {
  if (blob.size() % sizeof(float) != 0) {
    return Status::error(path + ": semantic cache entry " + std::to_string(id) + ": embedding of " +
                         std::to_string(blob.size()) + " bytes is not a whole number of float32 values");
  }
  std::vector<float> embedding(blob.size() / sizeof(float));
  // memcpy from an empty vector's null data() is undefined, even for 0 bytes.
  if (!blob.empty()) std::memcpy(embedding.data(), blob.data(), blob.size());
  return embedding;
}

// A row of kEntryColumns.
Result<CacheEntry> entry_at(const Statement& row, const std::string& path) {
  const std::int64_t id = row.int64_at(0);
  Result<std::vector<float>> embedding = embedding_from_blob(row.blob_at(3), id, path);
  if (!embedding) return embedding.status();
  return CacheEntry{id,
                    row.text_at(1),
                    row.text_at(2),
                    std::move(*embedding),
                    row.text_at(4),
                    row.int64_at(5),
                    row.int64_at(6),
                    row.int64_at(7),
                    row.int64_at(8),
                    row.int64_at(9)};
}

Result<std::vector<CacheEntry>> read_entries(Statement& select, const std::string& path) {
  std::vector<CacheEntry> entries;
  for (;;) {
    Result<bool> row = select.step();
    if (!row) return row.status();
    if (!*row) return entries;
    Result<CacheEntry> entry = entry_at(select, path);
    if (!entry) return entry.status();
    entries.push_back(std::move(*entry));
  }
}

Status delete_ids(Database& db, std::span<const std::int64_t> ids) {
  for (std::int64_t id : ids) {
    Result<Statement> remove = db.prepare(kDeleteEntry);
    if (!remove) return remove.status();
    remove->bind(1, id);
    INFERSCOPE_RETURN_IF_ERROR(remove->run());
  }
  return Status::ok();
}

}  // namespace

std::int64_t cache_entry_bytes(std::string_view prompt, std::string_view response, std::size_t embedding_dims) {
  return static_cast<std::int64_t>(prompt.size() + response.size() + embedding_dims * sizeof(float));
}

Result<CacheEntry> SemanticCacheRepo::insert(const NewCacheEntry& entry) { return insert(entry, {}); }

Result<CacheEntry> SemanticCacheRepo::insert(const NewCacheEntry& entry, std::span<const std::int64_t> evicted_ids) {
  const std::int64_t now = db_.now_ms();
  const std::int64_t bytes = cache_entry_bytes(entry.prompt, entry.response, entry.embedding.size());
  CacheEntry record{0,   entry.scope_key, entry.prompt, entry.embedding, entry.response, 0,
                    now, now,             entry.expires_at, bytes};
  Status status = db_.write_transaction("adding a semantic cache entry", [&]() -> Status {
    INFERSCOPE_RETURN_IF_ERROR(delete_ids(db_, evicted_ids));
    Result<Statement> insert = db_.prepare(kInsertEntry);
    if (!insert) return insert.status();
    insert->bind(1, entry.scope_key).bind(2, entry.prompt).bind(4, entry.response).bind(5, now);
    insert->bind(6, entry.expires_at).bind(7, bytes);
    insert->bind_blob(3, entry.embedding.data(), entry.embedding.size() * sizeof(float));
    INFERSCOPE_RETURN_IF_ERROR(insert->run());
    record.id = db_.last_insert_rowid();
    return Status::ok();
  });
  if (!status) return status;
  return record;
}

Result<std::vector<CacheEntry>> SemanticCacheRepo::find_by_scope(const std::string& scope_key) {
  Result<Statement> select = db_.prepare(std::string(kEntryColumns) + kEntriesOfScope);
  if (!select) return select.status();
  select->bind(1, scope_key);
  return read_entries(*select, db_.path());
}

Result<std::vector<CacheEntryUsage>> SemanticCacheRepo::usage() {
  Result<Statement> select = db_.prepare(kUsage);
  if (!select) return select.status();
  std::vector<CacheEntryUsage> entries;
  for (;;) {
    Result<bool> row = select->step();
    if (!row) return row.status();
    if (!*row) return entries;
    entries.push_back(CacheEntryUsage{select->int64_at(0), select->text_at(1), select->int64_at(2),
                                      select->int64_at(3), select->int64_at(4), select->int64_at(5),
                                      select->int64_at(6)});
  }
}

Result<std::vector<CacheEntry>> SemanticCacheRepo::list(const CacheListQuery& query) {
  Result<Statement> select = db_.prepare(std::string(kEntryColumns) + kListedEntries);
  if (!select) return select.status();
  select->bind(1, query.scope_key).bind(2, query.text).bind(3, query.live_at).bind(4, query.limit);
  return read_entries(*select, db_.path());
}

Result<bool> SemanticCacheRepo::touch(std::int64_t id, std::int64_t now_ms) {
  bool found = false;
  Status status = db_.write_transaction("recording a semantic cache hit", [&]() -> Status {
    Result<Statement> update = db_.prepare(kTouch);
    if (!update) return update.status();
    update->bind(1, id).bind(2, now_ms);
    INFERSCOPE_RETURN_IF_ERROR(update->run());
    found = db_.changed_rows() > 0;
    return Status::ok();
  });
  if (!status) return status;
  return found;
}

Status SemanticCacheRepo::remove(std::span<const std::int64_t> ids) {
  if (ids.empty()) return Status::ok();
  return db_.write_transaction("removing semantic cache entries", [&] { return delete_ids(db_, ids); });
}

Result<std::int64_t> SemanticCacheRepo::remove_where(const char* sql, std::string_view context,
                                                     const std::function<void(Statement&)>& bind) {
  std::int64_t removed = 0;
  Status status = db_.write_transaction(context, [&]() -> Status {
    Result<Statement> remove = db_.prepare(sql);
    if (!remove) return remove.status();
    bind(*remove);
    INFERSCOPE_RETURN_IF_ERROR(remove->run());
    removed = db_.changed_rows();
    return Status::ok();
  });
  if (!status) return status;
  return removed;
}

Result<std::int64_t> SemanticCacheRepo::remove_expired(std::int64_t now_ms) {
  return remove_where(kDeleteExpired, "removing expired semantic cache entries",
                      [&](Statement& s) { s.bind(1, now_ms); });
}

Result<std::int64_t> SemanticCacheRepo::remove_scope(const std::string& scope_key) {
  return remove_where(kDeleteScope, "removing a semantic cache scope", [&](Statement& s) { s.bind(1, scope_key); });
}

Status SemanticCacheRepo::clear() {
  Result<std::int64_t> removed = remove_where(kDeleteAll, "clearing the semantic cache", [](Statement&) {});
  return removed ? Status::ok() : removed.status();
}

Result<CacheTotals> SemanticCacheRepo::totals() {
  Result<Statement> select = db_.prepare(kTotals);
  if (!select) return select.status();
  Result<bool> row = select->step();
  if (!row) return row.status();
  if (!*row) return Status::error(db_.path() + ": counting semantic cache entries returned no row");
  return CacheTotals{select->int64_at(0), select->int64_at(1)};
}

}  // namespace inferscope::store
