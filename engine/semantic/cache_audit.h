// `cache audit --pairs FILE`: how well the cache's decision (similarity >= threshold, then the
// false-hit guard) separates prompts that mean the same from prompts that do not, with the
// user's own embedding model. The pairs file has one labelled pair per line:
//
//   prompt A<TAB>prompt B<TAB>same|different
//
// Blank lines and lines starting with '#' are skipped. A "hit" is a pair the cache would serve
// from one to the other; precision is the share of hits that are labelled same, recall the
// share of same pairs that hit.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/status.h"

namespace inferscope::semantic {

struct AuditPair {
  std::string prompt_a, prompt_b;
  bool same = false;
  int line = 0;  // 1-based, in the pairs file
};

// An error names the source and line of the first malformed pair.
Result<std::vector<AuditPair>> parse_audit_pairs(std::string_view text, std::string_view source_name);
Result<std::vector<AuditPair>> read_audit_pairs(const std::string& path);

// Any length; the audit scales it to unit length, as the cache does.
using EmbedFunction = std::function<Result<std::vector<float>>(const std::string&)>;

struct AuditSettings {
  float threshold = 0.97f;
  bool guard_enabled = true;
};

struct AuditCase {
  AuditPair pair;
  float similarity = 0.0f;
  std::string guard_reason;  // why the guard rejected it; empty when it did not
};

struct AuditReport {
  std::int64_t true_hits = 0;       // same, served
  std::int64_t false_hits = 0;      // different, served: the failure the cache must avoid
  std::int64_t missed = 0;          // same, not served
  std::int64_t correct_misses = 0;  // different, not served
  std::int64_t guard_rejections = 0;
  std::vector<AuditCase> false_hit_cases;
  std::vector<AuditCase> guard_saves;   // different pairs above the threshold the guard stopped
  std::vector<AuditCase> guard_losses;  // same pairs above the threshold the guard stopped

  double precision() const;  // true_hits / (true_hits + false_hits); 1 when nothing hit
  double recall() const;     // true_hits / (true_hits + missed); 1 when no pair is same
};

// Embeds each distinct prompt once. An embedding error stops the audit and names the prompt's line.
Result<AuditReport> run_cache_audit(const std::vector<AuditPair>& pairs, const EmbedFunction& embed,
                                    const AuditSettings& settings);

}  // namespace inferscope::semantic
