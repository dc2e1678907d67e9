#include "engine/store/semantic_cache_repo.h"

#include <cstring>

namespace inferscope::store {
namespace {

constexpr const char* kInsertEntry =
    "INSERT INTO semantic_cache (scope_key, prompt, embedding, response, created_at, last_used_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?5)";
constexpr const char* kEntriesOfScope =
    "SELECT id, scope_key, prompt, embedding, response, hits, created_at, last_used_at FROM semantic_cache "
    "WHERE scope_key = ?1 ORDER BY id";

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

}  // namespace

Result<CacheEntry> SemanticCacheRepo::insert(const NewCacheEntry& entry) {
  const std::int64_t now = db_.now_ms();
  CacheEntry record{0, entry.scope_key, entry.prompt, entry.embedding, entry.response, 0, now, now};
  Status status = db_.write_transaction("adding a semantic cache entry", [&]() -> Status {
    Result<Statement> insert = db_.prepare(kInsertEntry);
    if (!insert) return insert.status();
    insert->bind(1, entry.scope_key).bind(2, entry.prompt).bind(4, entry.response).bind(5, now);
    insert->bind_blob(3, entry.embedding.data(), entry.embedding.size() * sizeof(float));
    INFERSCOPE_RETURN_IF_ERROR(insert->run());
    record.id = db_.last_insert_rowid();
    return Status::ok();
  });
  if (!status) return status;
  return record;
}

Result<std::vector<CacheEntry>> SemanticCacheRepo::find_by_scope(const std::string& scope_key) {
  Result<Statement> select = db_.prepare(kEntriesOfScope);
  if (!select) return select.status();
  select->bind(1, scope_key);
  std::vector<CacheEntry> entries;
  for (;;) {
    Result<bool> row = select->step();
    if (!row) return row.status();
    if (!*row) return entries;
    const std::int64_t id = select->int64_at(0);
    Result<std::vector<float>> embedding = embedding_from_blob(select->blob_at(3), id, db_.path());
    if (!embedding) return embedding.status();
    entries.push_back(CacheEntry{id, select->text_at(1), select->text_at(2), std::move(*embedding),
                                 select->text_at(4), select->int64_at(5), select->int64_at(6), select->int64_at(7)});
  }
}

}  // namespace inferscope::store
