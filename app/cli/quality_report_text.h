// The weight lab's quality report on the terminal, shared by quantize and evaluate.
#pragma once

#include "engine/compare/quality_report.h"

namespace inferscope::cli {

// Runs the report and prints it (a table, or JSON on stdout); returns the exit code.
int print_quality_report(const QualityReportOptions& options, bool json);

}  // namespace inferscope::cli
