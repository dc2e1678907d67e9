// The subcommands of inferscope-cli; each lives in its own file (cmd_<name>.cpp).
#pragma once

#include <span>

namespace inferscope::cli {

struct Command {
  const char* name;
  int (*run)(int argc, char** argv);  // argv[0] is the command name
};

std::span<const Command> commands();

int run_generate(int argc, char** argv);
int run_inspect(int argc, char** argv);
int run_bench(int argc, char** argv);
int run_perplexity(int argc, char** argv);
int run_tokenize(int argc, char** argv);
int run_detokenize(int argc, char** argv);
int run_make_model(int argc, char** argv);
int run_quantize(int argc, char** argv);
int run_imatrix(int argc, char** argv);
int run_compare(int argc, char** argv);
int run_evaluate(int argc, char** argv);
int run_prune(int argc, char** argv);
int run_embed(int argc, char** argv);
int run_cache(int argc, char** argv);
int run_serve(int argc, char** argv);

}  // namespace inferscope::cli
