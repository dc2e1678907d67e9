#include "engine/semantic/cache_audit.h"

#include <fstream>
#include <sstream>
#include <unordered_map>

#include "engine/semantic/false_hit_guard.h"
#include "engine/semantic/unit_vector.h"
#include "kernels/cpu/similarity.h"

namespace inferscope::semantic {
namespace {

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> fields;
  for (std::size_t start = 0;;) {
    const std::size_t tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
    if (tab == std::string_view::npos) return fields;
    start = tab + 1;
  }
}

Result<AuditPair> parse_line(std::string_view line, int number, std::string_view source_name) {
  const std::string where = std::string(source_name) + ":" + std::to_string(number) + ": ";
  const std::vector<std::string_view> fields = split_tabs(line);
  if (fields.size() != 3) {
    return Status::error(where + "expected 3 tab-separated fields (prompt A, prompt B, same|different), found " +
                         std::to_string(fields.size()));
  }
  if (fields[2] != "same" && fields[2] != "different") {
    return Status::error(where + "third field must be \"same\" or \"different\", got \"" + std::string(fields[2]) + "\"");
  }
  if (fields[0].empty() || fields[1].empty()) return Status::error(where + "a prompt is empty");
  return AuditPair{std::string(fields[0]), std::string(fields[1]), fields[2] == "same", number};
}

// Each distinct prompt's unit embedding, computed once.
class EmbeddingMemo {
 public:
  explicit EmbeddingMemo(const EmbedFunction& embed) : embed_(embed) {}

  Result<const std::vector<float>*> unit_of(const std::string& prompt, int line) {
    auto found = memo_.find(prompt);
    if (found != memo_.end()) return &found->second;
    Result<std::vector<float>> raw = embed_(prompt);
    if (!raw) return Status::error("pairs line " + std::to_string(line) + ": embedding failed: " + raw.message());
    Result<std::vector<float>> unit = to_unit_vector(*raw);
    if (!unit) return Status::error("pairs line " + std::to_string(line) + ": " + unit.message());
    return &memo_.emplace(prompt, std::move(*unit)).first->second;
  }

 private:
  const EmbedFunction& embed_;
  std::unordered_map<std::string, std::vector<float>> memo_;
};

void count_case(AuditReport& report, AuditCase c, bool above_threshold, const GuardVerdict& verdict) {
  const bool hit = above_threshold && verdict.accepted;
  if (above_threshold && !verdict.accepted) {
    report.guard_rejections += 1;
    (c.pair.same ? report.guard_losses : report.guard_saves).push_back(c);
  }
  if (c.pair.same) {
    (hit ? report.true_hits : report.missed) += 1;
  } else if (hit) {
    report.false_hits += 1;
    report.false_hit_cases.push_back(std::move(c));
  } else {
    report.correct_misses += 1;
  }
}

}  // namespace

Result<std::vector<AuditPair>> parse_audit_pairs(std::string_view text, std::string_view source_name) {
  std::vector<AuditPair> pairs;
  int number = 0;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    number += 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    Result<AuditPair> pair = parse_line(line, number, source_name);
    if (!pair) return pair.status();
    pairs.push_back(std::move(*pair));
  }
  return pairs;
}

Result<std::vector<AuditPair>> read_audit_pairs(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error(path + ": cannot open the pairs file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_audit_pairs(text.str(), path);
}

double AuditReport::precision() const {
  const std::int64_t served = true_hits + false_hits;
  return served == 0 ? 1.0 : static_cast<double>(true_hits) / static_cast<double>(served);
}

double AuditReport::recall() const {
  const std::int64_t same = true_hits + missed;
  return same == 0 ? 1.0 : static_cast<double>(true_hits) / static_cast<double>(same);
}

Result<AuditReport> run_cache_audit(const std::vector<AuditPair>& pairs, const EmbedFunction& embed,
                                    const AuditSettings& settings) {
  const FalseHitGuard guard(settings.guard_enabled);
  EmbeddingMemo memo(embed);
  AuditReport report;
  for (const AuditPair& pair : pairs) {
    Result<const std::vector<float>*> a = memo.unit_of(pair.prompt_a, pair.line);
    if (!a) return a.status();
    Result<const std::vector<float>*> b = memo.unit_of(pair.prompt_b, pair.line);
    if (!b) return b.status();
    if ((*a)->size() != (*b)->size()) {
      return Status::error("pairs line " + std::to_string(pair.line) + ": the two embeddings have different lengths");
    }
    const float similarity = kernels::dot((*a)->data(), (*b)->data(), (*a)->size());
    const bool above_threshold = similarity >= settings.threshold;
    const GuardVerdict verdict = above_threshold ? guard.check(pair.prompt_a, pair.prompt_b) : GuardVerdict{};
    count_case(report, AuditCase{pair, similarity, verdict.reason}, above_threshold, verdict);
  }
  return report;
}

}  // namespace inferscope::semantic
