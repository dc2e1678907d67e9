#include "app/cli/quality_report_text.h"

#include <cstdio>

namespace inferscope::cli {

int print_quality_report(const QualityReportOptions& options, bool json) {
  std::fprintf(stderr, "quality report: %s against %s...\n", options.candidate.c_str(), options.reference.c_str());
  auto report = evaluate_models(options);
  if (!report) {
    std::fprintf(stderr, "error: quality report: %s\n", report.message().c_str());
    return 1;
  }
  std::printf("%s", json ? (quality_report_json(*report, 2) + "\n").c_str() : quality_report_table(*report).c_str());
  return 0;
}

}  // namespace inferscope::cli
