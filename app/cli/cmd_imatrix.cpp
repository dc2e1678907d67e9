// imatrix: an importance matrix of a model over a calibration text, in llama.cpp's GGUF imatrix
// format (engine/weightlab/imatrix.h), for quantize --imatrix.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "engine/weightlab/imatrix.h"
#include "engine/weightlab/imatrix_file.h"

namespace inferscope::cli {

int run_imatrix(int argc, char** argv) {
  Args args(argc, argv, "imatrix",
            "Computes an importance matrix (the sum of each input column's squared activation for every matrix of\n"
            "the blocks) over a calibration text, read in chunks as llama.cpp's llama-imatrix reads it, and writes\n"
            "it in its GGUF imatrix format for quantize --imatrix.\n"
            "Example: inferscope-cli imatrix --model m.gguf --text calibration.txt --output m.imatrix",
            {kModelOption,
             {"text", "FILE", "calibration text (required)"},
             {"output", "FILE", "where to write the importance matrix (required)"},
             {"chunk-size", "N", "tokens per chunk (default 512, at most the model's context)"},
             {"chunks", "N", "at most this many chunks (default: every whole chunk of the text)"},
             kThreadsOption});
  if (!args.ok()) return args.exit_code();
  if (!args.has("text")) args.fail("--text FILE is required");
  if (!args.has("output")) args.fail("--output FILE is required");
  ImatrixOptions options;
  options.chunk_size = args.integer("chunk-size", 512, 2, int64_t(1) << 20);
  options.max_chunks = args.integer("chunks", -1, 1, int64_t(1) << 30);
  const int threads = read_threads(args);
  if (!args.ok()) return args.exit_code();
  options.n_threads = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string text;
  if (!read_file(args.string("text"), &text)) {
    std::fprintf(stderr, "error: cannot read %s\n", args.string("text").c_str());
    return 1;
  }
  options.dataset = std::filesystem::path(args.string("text")).filename().string();
  options.progress = [](int64_t done, int64_t total) {
    draw_progress_bar(done, total, std::to_string(done) + "/" + std::to_string(total) + " chunks");
  };
  auto model = load_model_from_args(args);
  if (!model) return 1;
  auto im = compute_imatrix(model, text, options);
  std::fprintf(stderr, "\n");
  if (!im) return fail(im.status());
  if (Status st = write_imatrix(*im, args.string("output")); !st) return fail(st);
  std::printf("%zu matrices, %lld chunks of %lld tokens: wrote %s\n", im->entries.size(),
              static_cast<long long>(im->chunk_count), static_cast<long long>(im->chunk_size),
              args.string("output").c_str());
  return 0;
}

}  // namespace inferscope::cli
