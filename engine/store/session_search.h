// The session search box: which live sessions have a message containing every word typed
// (full-text, FTS5; the last word also matches as a prefix, so results follow the typing).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/store/database.h"

namespace inferscope::store {

// Turns typed text into an FTS5 query: each word becomes a quoted prefix term, so quotes,
// operators and column names in the text are searched for, never interpreted.
std::string fts_query_from_typed_text(const std::string& typed);

class SessionSearch {
 public:
  explicit SessionSearch(Database& db) : db_(db) {}

  // Session ids, most recently updated first; empty for text without words.
  Result<std::vector<std::int64_t>> find(const std::string& typed);

 private:
  Database& db_;
};

}  // namespace inferscope::store
