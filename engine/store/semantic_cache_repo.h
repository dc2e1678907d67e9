// Semantic-cache entries: a prompt's embedding and the response given to it, grouped by scope
// (model hash + system prompt + sampling). Only storage; similarity and policy come later.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/store/database.h"

namespace inferscope::store {

struct NewCacheEntry {
  std::string scope_key;
  std::string prompt;
  std::vector<float> embedding;
  std::string response;
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
};

class SemanticCacheRepo {
 public:
  explicit SemanticCacheRepo(Database& db) : db_(db) {}

  Result<CacheEntry> insert(const NewCacheEntry& entry);
  // Every entry of the scope, oldest first.
  Result<std::vector<CacheEntry>> find_by_scope(const std::string& scope_key);

 private:
  Database& db_;
};

}  // namespace inferscope::store
