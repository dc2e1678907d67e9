#include "engine/store/session_search.h"

#include <sstream>

namespace inferscope::store {
namespace {

constexpr const char* kSessionsMatching =
    "SELECT id FROM sessions WHERE deleted_at IS NULL AND id IN ("
    "  SELECT messages.session_id FROM message_search JOIN messages ON messages.id = message_search.rowid"
    "  WHERE message_search MATCH ?1) "
    "ORDER BY updated_at DESC, id DESC";

std::string quoted_prefix_term(const std::string& word) {
  std::string term = "\"";
  for (char c : word) {
    if (c == '"') term += '"';
    term += c;
  }
  return term + "\"*";
}

}  // namespace

std::string fts_query_from_typed_text(const std::string& typed) {
  std::istringstream words(typed);
  std::string query;
  for (std::string word; words >> word;) {
    if (!query.empty()) query += ' ';
    query += quoted_prefix_term(word);
  }
  return query;
}

Result<std::vector<std::int64_t>> SessionSearch::find(const std::string& typed) {
  const std::string query = fts_query_from_typed_text(typed);
  std::vector<std::int64_t> ids;
  if (query.empty()) return ids;
  Result<Statement> select = db_.prepare(kSessionsMatching);
  if (!select) return select.status();
  select->bind(1, query);
  for (;;) {
    Result<bool> row = select->step();
    if (!row) return row.status();
    if (!*row) return ids;
    ids.push_back(select->int64_at(0));
  }
}

}  // namespace inferscope::store
