// evaluate: the weight lab's quality report for any two model files (a converted model against
// its source): KL divergence, top-1 agreement, perplexity of both, file sizes and speed.
#include <thread>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "app/cli/quality_report_text.h"

namespace inferscope::cli {

int run_evaluate(int argc, char** argv) {
  Args args(argc, argv, "evaluate",
            "Compares a model with a reference model on a held-out text: mean KL divergence of the next-token\n"
            "distributions at every position, top-1 agreement, the perplexity of both, file sizes, and prefill and\n"
            "decode tokens/s of both (measured in one run). The two must share a vocabulary.\n"
            "Example: inferscope-cli evaluate --model model-q4_0.gguf --reference model-f16.gguf",
            {{"model", "FILE", "the model to evaluate (required)"},
             {"reference", "FILE", "the reference model, e.g. the source of a quantization (required)"},
             {"eval", "FILE", "held-out text (default: the shipped evaluation text)"},
             {"reps", "N", "timing repetitions, alternating the two models (default 2)"},
             {"json", nullptr, "print the report as JSON"},
             kBatchThreadsOption});
  if (!args.ok()) return args.exit_code();
  if (!args.has("model")) args.fail("--model FILE is required");
  if (!args.has("reference")) args.fail("--reference FILE is required");
  QualityReportOptions options;
  options.candidate = args.string("model");
  options.reference = args.string("reference");
  if (args.has("eval") && !read_file(args.string("eval"), &options.eval_text)) {
    args.fail("cannot read --eval " + args.string("eval"));
  }
  options.reps = static_cast<int>(args.integer("reps", 2, 1, 1000));
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.n_threads = static_cast<int>(args.integer("threads", hardware, 1, 1024));
  if (!args.ok()) return args.exit_code();
  return print_quality_report(options, args.flag("json"));
}

}  // namespace inferscope::cli
