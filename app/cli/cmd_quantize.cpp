// quantize: convert a GGUF model to another weight type or llama.cpp mix (q4_k_m, q8_0...), by
// plain rounding or a weight-lab method (GPTQ, AWQ, the ternary rule), then report the
// converted model's quality against the source on a held-out text.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "app/cli/quality_report_text.h"
#include "engine/model/quantize_model.h"
#include "engine/weightlab/weight_method.h"

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

// The method's options from the command line; false (after args.fail) when one is bad.
bool lab_options(Args& args, int threads, WeightLabOptions* lab) {
  const std::string method = args.string("method", "rtn");
  const auto m = weight_method_from_name(method);
  if (!m) {
    args.fail("unknown --method '" + method + "'; expected rtn, gptq, awq or ternary");
    return false;
  }
  lab->method = *m;
  lab->n_threads = threads;
  if (args.has("calibration") && !read_file(args.string("calibration"), &lab->calibration_text)) {
    args.fail("cannot read --calibration " + args.string("calibration"));
  }
  lab->calibration.max_tokens = args.integer("calibration-tokens", lab->calibration.max_tokens, 2, 1 << 20);
  lab->gptq.damp = args.number("damp", lab->gptq.damp, 0.0, 10.0);
  lab->gptq.act_order = args.flag("act-order");
  lab->ternary_per_block = args.flag("per-block");
  return args.ok();
}

}  // namespace

int run_quantize(int argc, char** argv) {
  static const std::string type_help =
      "file type: " + quant_mix_names() + " (aliases q3_k, q4_k, q5_k = the _m mixes) (required)";
  Args args(argc, argv, "quantize",
            "Converts a GGUF model to another weight type or llama.cpp's per-tensor mixes, tensor by tensor, by\n"
            "plain rounding (rtn) or a calibrated method, then reports the quality against the source model on a\n"
            "held-out text (docs/WEIGHT-LAB.md).\n"
            "Example: inferscope-cli quantize --model model-f16.gguf --output model-q4_0.gguf --type q4_0 --method gptq",
            {{"model", "FILE", "input GGUF (F32/F16/BF16 best; any decodable type is accepted) (required)"},
             {"output", "FILE", "where to write the quantized GGUF (required)"},
             {"type", "TYPE", type_help.c_str()},
             {"pure", nullptr, "every matrix gets TYPE (no per-tensor mix rules), like llama-quantize --pure"},
             {"method", "M", "rtn (round to nearest, default), gptq, awq, or ternary (with tq1_0/tq2_0)"},
             {"calibration", "FILE", "gptq, awq: calibration text (default: the shipped one)"},
             {"calibration-tokens", "N", "gptq, awq: tokens of calibration text read (default 1024)"},
             {"damp", "X", "gptq: dampening, a fraction of the Hessian's mean diagonal (default 0.01)"},
             {"act-order", nullptr, "gptq: quantize columns in decreasing Hessian diagonal"},
             {"per-block", nullptr, "ternary: the rule per 256-block instead of per row"},
             {"eval", "FILE", "held-out text of the quality report (default: the shipped one)"},
             {"no-report", nullptr, "skip the quality report"},
             {"json", nullptr, "print the quality report as JSON (the plan goes to stderr)"},
             kThreadsOption});
  if (!args.ok()) return args.exit_code();
  if (!args.has("model")) args.fail("--model FILE is required");
  if (!args.has("output")) args.fail("--output FILE is required");
  if (!args.has("type")) args.fail("--type TYPE is required (" + quant_mix_names() + ")");
  const auto mix = quant_mix_from_name(args.string("type"), args.flag("pure"));
  if (args.has("type") && !mix) {
    args.fail("unknown --type '" + args.string("type") + "'; expected one of " + quant_mix_names());
  }
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = static_cast<int>(args.integer("threads", hardware, 1, 1024));
  WeightLabOptions lab;
  lab_options(args, threads, &lab);
  std::string eval_text;
  if (args.has("eval") && !read_file(args.string("eval"), &eval_text)) args.fail("cannot read --eval " + args.string("eval"));
  if (!args.ok()) return args.exit_code();
  const bool json = args.flag("json");
  FILE* plan_out = json ? stderr : stdout;

  const auto t0 = std::chrono::steady_clock::now();
  auto file = gguf::File::open(args.string("model"));
  if (!file) return fail(file.status());
  if (is_calibrated(lab.method)) std::fprintf(stderr, "%s: reading the calibration text...\n", weight_method_name(lab.method));
  auto method = prepare_weight_method(*file, *mix, lab);
  if (!method) return fail(method.status());
  auto converted = quantized_gguf(*file, QuantizeOptions{*mix, threads, method->rewriter},
                                  isatty(STDERR_FILENO) ? draw_progress : std::function<void(double)>{});
  if (!converted) return fail(converted.status());
  print_plan(converted->plan, plan_out);
  Status st = converted->writer.write(args.string("output"));
  if (isatty(STDERR_FILENO)) std::fprintf(stderr, "\n");
  if (!st) return fail(st);
  const WeightLabSummary summary = method->summary();
  if (summary.calibration_tokens > 0) {
    std::fprintf(plan_out, "calibration: %lld tokens\n", static_cast<long long>(summary.calibration_tokens));
  }
  for (const std::string& note : summary.notes) std::fprintf(plan_out, "  %s\n", note.c_str());
  std::fprintf(stderr, "wrote %s (%s by %s, general.file_type %u) in %.1f s\n", args.string("output").c_str(),
               mix->name.c_str(), weight_method_name(lab.method), mix->file_type,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  if (args.flag("no-report")) return 0;
  QualityReportOptions report;
  report.reference = args.string("model");
  report.candidate = args.string("output");
  report.eval_text = eval_text;
  report.n_threads = threads;
  return print_quality_report(report, json);
}

}  // namespace inferscope::cli
