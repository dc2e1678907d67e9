#include "app/cli/commands.h"

#include <array>

namespace inferscope::cli {

std::span<const Command> commands() {
  static const std::array<Command, 15> kCommands = {{
      {"generate", run_generate},
      {"inspect", run_inspect},
      {"bench", run_bench},
      {"perplexity", run_perplexity},
      {"tokenize", run_tokenize},
      {"detokenize", run_detokenize},
      {"make-model", run_make_model},
      {"quantize", run_quantize},
      {"imatrix", run_imatrix},
      {"compare", run_compare},
      {"evaluate", run_evaluate},
      {"prune", run_prune},
      {"embed", run_embed},
      {"cache", run_cache},
      {"serve", run_serve},
  }};
  return kCommands;
}

}  // namespace inferscope::cli
