// inferscope-cli: one binary, one subcommand per job (generate, inspect, bench, ...).
#include <cstdio>
#include <cstring>
#include <string>

#include "app/cli/commands.h"

namespace {

void print_usage() {
  std::fprintf(stderr,
               "usage: inferscope-cli <command> [options]\n\n"
               "commands:\n"
               "  generate    generate text from a prompt (streams to stdout)\n"
               "  inspect     show a GGUF file's architecture, tokenizer, tensors and memory estimate\n"
               "  bench       measure prefill and decode tokens/s against the memory-bandwidth bound\n"
               "  perplexity  perplexity of a model over a text file\n"
               "  tokenize    print the token ids of a text\n"
               "  detokenize  print the text of token ids\n"
               "  make-model  write a random-weight GGUF of a chosen Llama shape\n"
               "  quantize    convert a model to another weight type, plainly or by a calibrated method\n"
               "  imatrix     an importance matrix of a model over a calibration text (for quantize --imatrix)\n"
               "  prune       prune a model's weights (magnitude, wanda, 2:4) or attention heads\n"
               "  evaluate    compare a model's quality with a reference model on a held-out text\n"
               "  compare     compare configurations side by side: speed, memory, quality\n"
               "  embed       print a text's embedding (BERT-family or chat model)\n"
               "  cache       the semantic cache: list, stats, clear, audit\n"
               "  serve       an OpenAI-compatible HTTP server for the model\n\n"
               "Run 'inferscope-cli <command> --help' for the options of a command.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    print_usage();
    return argc < 2 ? 2 : 0;
  }
  std::string command = argv[1];
  for (const inferscope::cli::Command& c : inferscope::cli::commands()) {
    if (command == c.name) return c.run(argc - 1, argv + 1);
  }
  std::fprintf(stderr, "inferscope-cli: unknown command '%s'\n\n", command.c_str());
  print_usage();
  return 2;
}
