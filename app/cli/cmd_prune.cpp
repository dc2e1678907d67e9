// prune: remove weights (magnitude, Wanda, 2:4) or whole attention heads from a GGUF model, then
// report the pruned model's quality against the source on a held-out text.
#include <cstdio>
#include <thread>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "app/cli/weight_lab_run.h"
#include "engine/weightlab/head_pruning.h"

namespace inferscope::cli {

namespace {

// The mix that keeps the source's matrix type (F32 for stories260K, F16 for most downloads).
std::optional<QuantMix> source_mix(const gguf::File& file) {
  for (const gguf::TensorInfo& t : file.tensors()) {
    if (t.name.find("attn_q.weight") != std::string::npos || t.name.find("attn_qkv.weight") != std::string::npos) {
      return quant_mix_from_name(kernels::type_name(t.type), true);
    }
  }
  return std::nullopt;
}

int run_head_pruning(const WeightLabRun& run, int heads) {
  auto file = gguf::File::open(run.model);
  if (!file) return fail(file.status());
  auto calibration = read_calibration(*file, run.lab);
  if (!calibration) return fail(calibration.status());
  auto pruned = prune_heads(*file, *calibration, heads);
  if (!pruned) return fail(pruned.status());
  FILE* out = run.json ? stderr : stdout;
  for (size_t l = 0; l < pruned->removed.size(); ++l) {
    std::fprintf(out, "blk.%zu: KV groups removed", l);
    for (int g : pruned->removed[l]) std::fprintf(out, " %d (importance %.4g)", g, pruned->importance[l][static_cast<size_t>(g)]);
    std::fprintf(out, "\n");
  }
  std::fprintf(out, "heads %d -> %d (KV heads %d)\n", pruned->heads_before, pruned->heads_after, pruned->kv_heads_after);
  if (Status st = pruned->writer.write(run.output); !st) return fail(st);
  std::fprintf(stderr, "wrote %s\n", run.output.c_str());
  return report_quality(run);
}

}  // namespace

int run_prune(int argc, char** argv) {
  Args args(argc, argv, "prune",
            "Prunes a GGUF model and reports its quality against the source on a held-out text\n"
            "(docs/WEIGHT-LAB.md). magnitude and wanda zero the --sparsity fraction of each row of the blocks'\n"
            "linear layers (wanda scores |w| x the input's norm on calibration text); 2:4 keeps 2 of every 4;\n"
            "heads removes the --heads least important query heads of every layer (whole KV groups).\n"
            "Example: inferscope-cli prune --model m.gguf --output m-wanda.gguf --method wanda --sparsity 0.5",
            {{"model", "FILE", "input GGUF (required)"},
             {"output", "FILE", "where to write the pruned GGUF (required)"},
             {"method", "M", "magnitude, wanda, 2:4 or heads (required)"},
             {"sparsity", "S", "magnitude, wanda: fraction of each row set to 0 (default 0.5)"},
             {"heads", "N", "heads: query heads removed per layer, a multiple of the GQA group size"},
             {"type", "TYPE", "weight type of the pruned file (default: the source's)"},
             {"calibration", "FILE", "wanda, 2:4, heads: calibration text (default: the shipped one)"},
             {"eval", "FILE", "held-out text of the quality report (default: the shipped one)"},
             {"no-report", nullptr, "skip the quality report"},
             {"json", nullptr, "print the quality report as JSON"},
             kBatchThreadsOption});
  if (!args.ok()) return args.exit_code();
  if (!args.has("model")) args.fail("--model FILE is required");
  if (!args.has("output")) args.fail("--output FILE is required");
  const std::string method = args.string("method");
  const auto m = weight_method_from_name(method);
  const bool heads = method == "heads";
  if (!heads && (!m || !is_pruning(*m))) args.fail("--method must be magnitude, wanda, 2:4 or heads");
  if (heads && !args.has("heads")) args.fail("--method heads needs --heads N");
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  WeightLabRun run;
  run.model = args.string("model");
  run.output = args.string("output");
  run.lab.n_threads = static_cast<int>(args.integer("threads", hardware, 1, 1024));
  run.lab.sparsity = args.number("sparsity", 0.5, 0.0, 1.0);
  if (args.has("calibration") && !read_file(args.string("calibration"), &run.lab.calibration_text)) {
    args.fail("cannot read --calibration " + args.string("calibration"));
  }
  if (args.has("eval") && !read_file(args.string("eval"), &run.eval_text)) args.fail("cannot read --eval " + args.string("eval"));
  run.json = args.flag("json");
  run.report = !args.flag("no-report");
  const int n_heads = static_cast<int>(args.integer("heads", 0, 1, 4096));
  if (!args.ok()) return args.exit_code();
  if (heads) return run_head_pruning(run, n_heads);

  run.lab.method = *m;
  if (args.has("type")) {
    const auto mix = quant_mix_from_name(args.string("type"));
    if (!mix) {
      args.fail("unknown --type '" + args.string("type") + "'; expected one of " + quant_mix_names());
      return args.exit_code();
    }
    run.mix = *mix;
  } else {
    auto file = gguf::File::open(run.model);
    if (!file) return fail(file.status());
    const auto mix = source_mix(**file);
    if (!mix) return fail(Status::error("cannot tell the source's weight type; give --type"));
    run.mix = *mix;
  }
  return run_weight_lab(run);
}

}  // namespace inferscope::cli
