#include "engine/store/integrity.h"

#include <string>
#include <vector>

#include "engine/store/store_error.h"

namespace inferscope::store {
namespace {

constexpr int kFindingsReported = 5;

}  // namespace

Status verify_integrity(Database& db, IntegrityCheck depth) {
  const char* pragma = depth == IntegrityCheck::quick ? "PRAGMA quick_check" : "PRAGMA integrity_check";
  Result<std::vector<std::string>> findings = db.query_texts(pragma, kFindingsReported);
  if (!findings) return findings.status();
  if (findings->size() == 1 && findings->front() == "ok") return Status::ok();
  std::string detail;
  for (const std::string& finding : *findings) detail += (detail.empty() ? "" : "; ") + finding;
  return damaged_database_error(db.path(), detail.empty() ? "no result" : detail);
}

}  // namespace inferscope::store
