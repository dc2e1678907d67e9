// quantize: convert a GGUF model to another weight type or llama.cpp mix (q4_k_m, q8_0...).
#include <chrono>
#include <cstdio>
#include <thread>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "engine/model/quantize_model.h"

namespace inferscope::cli {

namespace {

void print_plan(const QuantizePlan& plan) {
  int requantized = 0;
  for (const TensorPlan& t : plan.tensors) {
    std::printf("%-40s %-14s %6s -> %-6s %10s -> %s\n", t.name.c_str(), t.shape.c_str(), kernels::type_name(t.from),
                kernels::type_name(t.to), format_bytes(t.bytes_before).c_str(), format_bytes(t.bytes_after).c_str());
    if (t.requantized) ++requantized;
  }
  if (requantized > 0) {
    std::fprintf(stderr,
                 "warning: %d tensors are already quantized; requantizing them adds the errors of both types "
                 "(quantize from an F32/F16/BF16 file where possible)\n",
                 requantized);
  }
  std::printf("tensor data: %s -> %s\n", format_bytes(plan.bytes_before()).c_str(),
              format_bytes(plan.bytes_after()).c_str());
}

}  // namespace

int run_quantize(int argc, char** argv) {
  static const std::string type_help =
      "file type: " + quant_mix_names() + " (aliases q3_k, q4_k, q5_k = the _m mixes) (required)";
  Args args(argc, argv, "quantize",
            "Converts a GGUF model to another weight type or llama.cpp's per-tensor mixes, tensor by tensor.\n"
            "Example: inferscope-cli quantize --model model-f16.gguf --output model-q4_k_m.gguf --type q4_k_m",
            {{"model", "FILE", "input GGUF (F32/F16/BF16 best; any decodable type is accepted) (required)"},
             {"output", "FILE", "where to write the quantized GGUF (required)"},
             {"type", "TYPE", type_help.c_str()},
             {"pure", nullptr, "every matrix gets TYPE (no per-tensor mix rules), like llama-quantize --pure"},
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
  if (!args.ok()) return args.exit_code();

  const auto t0 = std::chrono::steady_clock::now();
  Status st = quantize_model(args.string("model"), args.string("output"), QuantizeOptions{*mix, threads}, print_plan);
  if (!st) {
    std::fprintf(stderr, "error: %s\n", st.message().c_str());
    return 1;
  }
  std::fprintf(stderr, "wrote %s (%s, general.file_type %u) in %.1f s\n", args.string("output").c_str(),
               mix->name.c_str(), mix->file_type,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return 0;
}

}  // namespace inferscope::cli
