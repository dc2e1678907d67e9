#include "engine/compare/quality_report.h"

#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "engine/compare/comparison.h"
#include "engine/weightlab/weight_method.h"

namespace inferscope {
namespace {

// The timing prompt: the text's first paragraph.
std::string timing_prompt(const std::string& text) {
  const size_t end = text.find('\n');
  return text.substr(0, end == std::string::npos ? std::min<size_t>(text.size(), 400) : end);
}

ModelFigures figures_of(const ConfigResult& r, const std::string& path) {
  ModelFigures f;
  f.path = path;
  std::error_code ec;
  f.file_bytes = static_cast<uint64_t>(std::filesystem::file_size(path, ec));
  f.perplexity = r.quality.perplexity;
  f.prefill_tokens_per_s = r.prefill_tokens_per_s.median;
  f.decode_tokens_per_s = r.decode_tokens_per_s.median;
  return f;
}

std::string line(const char* name, const ModelFigures& f) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-10s %12.2f MiB %12.4f %10.1f %10.1f  %s\n", name,
                static_cast<double>(f.file_bytes) / (1 << 20), f.perplexity, f.prefill_tokens_per_s,
                f.decode_tokens_per_s, f.path.c_str());
  return buf;
}

}  // namespace

Result<QualityReport> evaluate_models(const QualityReportOptions& options) {
  const std::string& text = options.eval_text.empty() ? default_eval_text() : options.eval_text;
  ComparisonOptions co;
  CompareConfig reference, candidate;
  reference.model_path = options.reference;
  reference.label = "reference";
  reference.n_threads = options.n_threads;
  candidate.model_path = options.candidate;
  candidate.label = "candidate";
  candidate.n_threads = options.n_threads;
  co.configs = {reference, candidate};
  co.prompts = {timing_prompt(text)};
  co.quality_text = text;
  co.reps = options.reps;
  co.max_tokens = options.max_tokens;
  auto result = run_comparison(co);
  if (!result) return result.status();
  for (const ConfigResult& r : result->configs) {
    if (!r.ran) return Result<QualityReport>::error(r.config.label + " model: " + r.refusal);
  }
  const ConfigResult& c = result->configs[1];
  if (!c.quality_comparable) return Result<QualityReport>::error("no quality figures: " + c.quality_note);
  QualityReport report;
  report.reference = figures_of(result->configs[0], options.reference);
  report.candidate = figures_of(c, options.candidate);
  report.positions = c.quality.positions;
  report.mean_kl = c.quality.mean_kl;
  report.max_kl = c.quality.max_kl;
  report.top1_agreement = c.quality.top1_agreement;
  return report;
}

std::string quality_report_table(const QualityReport& r) {
  char buf[256];
  std::string out = "model              file size   perplexity  prefill/s   decode/s  file\n";
  out += line("reference", r.reference);
  out += line("candidate", r.candidate);
  std::snprintf(buf, sizeof buf, "over %lld positions: mean KL %.6f nats (max %.4f), top-1 agreement %.2f%%\n",
                static_cast<long long>(r.positions), r.mean_kl, r.max_kl, 100.0 * r.top1_agreement);
  return out + buf;
}

std::string quality_report_json(const QualityReport& r, int indent) {
  nlohmann::ordered_json j;
  j["mean_kl"] = r.mean_kl;
  j["max_kl"] = r.max_kl;
  j["top1_agreement"] = r.top1_agreement;
  j["positions"] = r.positions;
  j["perplexity"] = r.candidate.perplexity;
  j["source_perplexity"] = r.reference.perplexity;
  j["file_bytes"] = r.candidate.file_bytes;
  j["source_file_bytes"] = r.reference.file_bytes;
  j["prefill_tokens_per_s"] = r.candidate.prefill_tokens_per_s;
  j["decode_tokens_per_s"] = r.candidate.decode_tokens_per_s;
  j["source_prefill_tokens_per_s"] = r.reference.prefill_tokens_per_s;
  j["source_decode_tokens_per_s"] = r.reference.decode_tokens_per_s;
  j["model"] = r.candidate.path;
  j["reference"] = r.reference.path;
  return j.dump(indent);
}

}  // namespace inferscope
