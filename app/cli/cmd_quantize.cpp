// quantize: convert a GGUF model to another weight type or llama.cpp mix (q4_k_m, q8_0...), by
// plain rounding or a weight-lab method (GPTQ, AWQ, the ternary rule), then report the
// converted model's quality against the source on a held-out text.
#include <thread>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "app/cli/weight_lab_run.h"
#include "engine/weightlab/llm_int8_method.h"

namespace inferscope::cli {

namespace {

// The method's options from the command line; false (after args.fail) when one is bad.
bool lab_options(Args& args, int threads, WeightLabOptions* lab) {
  const std::string method = args.string("method", "rtn");
  const auto m = weight_method_from_name(method);
  if (!m || is_pruning(*m)) {
    args.fail("unknown --method '" + method +
              "'; expected rtn, imatrix, gptq, awq, ternary or llm-int8 (pruning: the prune command)");
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
  lab->llm_int8_threshold = static_cast<float>(args.number("threshold", kLlmInt8DefaultThreshold, 0.0, 1e6));
  lab->imatrix_path = args.string("imatrix", "");
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
             {"method", "M", "rtn (round to nearest, default), imatrix (rtn weighted by an importance matrix of the calibration text), gptq, awq, ternary (with tq1_0/tq2_0), llm-int8 (with int8)"},
             {"imatrix", "FILE", "rtn: weigh the rounding of the K-quants, iq4_nl and iq4_xs by an importance matrix (the imatrix command's or llama-imatrix's file)"},
             {"calibration", "FILE", "imatrix, gptq, awq: calibration text (default: the shipped one)"},
             {"calibration-tokens", "N", "imatrix, gptq, awq: tokens of calibration text read (default 1024)"},
             {"damp", "X", "gptq: dampening, a fraction of the Hessian's mean diagonal (default 0.01)"},
             {"act-order", nullptr, "gptq: quantize columns in decreasing Hessian diagonal"},
             {"group-size", "N", "gptq: the quantization group, which is the type's block (32; 256 for K-quants)"},
             {"per-block", nullptr, "ternary: the rule per 256-block instead of per row"},
             {"threshold", "X", "llm-int8: feature magnitude above which a column is an outlier (default 6)"},
             {"eval", "FILE", "held-out text of the quality report (default: the shipped one)"},
             {"no-report", nullptr, "skip the quality report"},
             {"json", nullptr, "print the quality report as JSON (the plan goes to stderr)"},
             kBatchThreadsOption});
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
  if (mix && args.has("group-size")) {
    const int64_t block = kernels::type_info(mix->base).block_size;
    if (args.integer("group-size", block, 1, 1 << 20) != block) {
      args.fail("--group-size: the groups of " + mix->name + " are its blocks of " + std::to_string(block) +
                " weights (GPTQ keeps the type's block grid)");
    }
  }
  std::string eval_text;
  if (args.has("eval") && !read_file(args.string("eval"), &eval_text)) args.fail("cannot read --eval " + args.string("eval"));
  if (!args.ok()) return args.exit_code();
  WeightLabRun run{args.string("model"), args.string("output"), *mix, lab, eval_text, args.flag("json"),
                   !args.flag("no-report")};
  return run_weight_lab(run);
}

}  // namespace inferscope::cli
