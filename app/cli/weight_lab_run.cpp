#include "app/cli/weight_lab_run.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "app/cli/cli_common.h"
#include "app/cli/quality_report_text.h"
#include "engine/model/quantize_model.h"
#include "engine/weightlab/llm_int8_method.h"

namespace inferscope::cli {

namespace {

void print_plan(const QuantizePlan& plan, FILE* out) {
  int requantized = 0;
  for (const TensorPlan& t : plan.tensors) {
    std::fprintf(out, "%-40s %-14s %6s -> %-6s %10s -> %s\n", t.name.c_str(), t.shape.c_str(),
                 kernels::type_name(t.from), kernels::type_name(t.to), format_bytes(t.bytes_before).c_str(),
                 format_bytes(t.bytes_after).c_str());
    if (t.requantized) ++requantized;
  }
  if (requantized > 0) {
    std::fprintf(stderr,
                 "warning: %d tensors are already quantized; requantizing them adds the errors of both types "
                 "(quantize from an F32/F16/BF16 file where possible)\n",
                 requantized);
  }
  std::fprintf(out, "tensor data: %s -> %s\n", format_bytes(plan.bytes_before()).c_str(),
               format_bytes(plan.bytes_after()).c_str());
}

void draw_progress(double fraction) {
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * fraction);
  std::fprintf(stderr, "\r[%s%s] %3d%% writing", std::string(filled, '#').c_str(),
               std::string(kWidth - filled, '.').c_str(), static_cast<int>(100 * fraction));
  std::fflush(stderr);
}

// LLM.int8(): the fraction of outlier columns per layer on the evaluation text.
void print_outlier_fractions(const WeightLabRun& run) {
  auto fractions = llm_int8_outlier_fractions(run.output, run.eval_text.empty() ? default_eval_text() : run.eval_text,
                                              run.lab.n_threads);
  if (!fractions) {
    std::fprintf(stderr, "error: outlier columns: %s\n", fractions.message().c_str());
    return;
  }
  std::fprintf(stderr, "LLM.int8() outlier columns (|x| > %g) per layer on the evaluation text:", run.lab.llm_int8_threshold);
  for (size_t l = 0; l < fractions->size(); ++l) std::fprintf(stderr, " %zu: %.2f%%", l, 100.0 * (*fractions)[l]);
  std::fprintf(stderr, "\n");
}

}  // namespace

int run_weight_lab(const WeightLabRun& run) {
  FILE* plan_out = run.json ? stderr : stdout;
  const auto t0 = std::chrono::steady_clock::now();
  auto file = gguf::File::open(run.model);
  if (!file) return fail(file.status());
  if (is_calibrated(run.lab.method)) {
    std::fprintf(stderr, "%s: reading the calibration text...\n", weight_method_name(run.lab.method));
  }
  auto method = prepare_weight_method(*file, run.mix, run.lab);
  if (!method) return fail(method.status());
  auto converted = quantized_gguf(*file, QuantizeOptions{run.mix, run.lab.n_threads, method->rewriter},
                                  isatty(STDERR_FILENO) ? draw_progress : std::function<void(double)>{});
  if (!converted) return fail(converted.status());
  print_plan(converted->plan, plan_out);
  Status st = converted->writer.write(run.output);
  if (isatty(STDERR_FILENO)) std::fprintf(stderr, "\n");
  if (!st) return fail(st);
  const WeightLabSummary summary = method->summary();
  if (summary.calibration_tokens > 0) {
    std::fprintf(plan_out, "calibration: %lld tokens\n", static_cast<long long>(summary.calibration_tokens));
  }
  for (const std::string& note : summary.notes) std::fprintf(plan_out, "  %s\n", note.c_str());
  std::fprintf(stderr, "wrote %s (%s by %s, general.file_type %u) in %.1f s\n", run.output.c_str(), run.mix.name.c_str(),
               weight_method_name(run.lab.method), run.mix.file_type,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  const int code = report_quality(run);
  if (code == 0 && run.report && run.lab.method == WeightMethod::LlmInt8) print_outlier_fractions(run);
  return code;
}

int report_quality(const WeightLabRun& run) {
  if (!run.report) return 0;
  QualityReportOptions report;
  report.reference = run.model;
  report.candidate = run.output;
  report.eval_text = run.eval_text;
  report.n_threads = run.lab.n_threads;
  return print_quality_report(report, run.json);
}

}  // namespace inferscope::cli
