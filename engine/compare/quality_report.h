// The weight lab's quality report: a model file against its source (the reference) on a
// held-out text, by the comparison workbench (engine/compare): mean KL divergence of the
// next-token distributions over every position of the text, top-1 agreement, the perplexity
// of both, file sizes, and prefill and decode tokens/s of both measured in one run.
#pragma once

#include <cstdint>
#include <string>

#include "engine/core/status.h"

namespace inferscope {

struct QualityReportOptions {
  std::string reference;  // the source model file
  std::string candidate;  // the converted model file
  std::string eval_text;  // empty: default_eval_text()
  int n_threads = 1;
  int reps = 2;              // timing rounds (alternating the two)
  int32_t max_tokens = 32;   // decoded after the timing prompt
};

struct ModelFigures {
  std::string path;
  uint64_t file_bytes = 0;
  double perplexity = 0;
  double prefill_tokens_per_s = 0, decode_tokens_per_s = 0;  // medians
};

struct QualityReport {
  ModelFigures reference, candidate;
  int64_t positions = 0;
  double mean_kl = 0, max_kl = 0, top1_agreement = 0;
};

Result<QualityReport> evaluate_models(const QualityReportOptions& options);

// The report as an aligned table (the CLI's output).
std::string quality_report_table(const QualityReport& report);
// The report as JSON: mean_kl, max_kl, top1_agreement, positions, perplexity and
// source_perplexity, file_bytes and source_file_bytes, and tokens/s of both.
std::string quality_report_json(const QualityReport& report, int indent);

}  // namespace inferscope
