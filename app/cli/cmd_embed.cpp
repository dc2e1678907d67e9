// embed: a sentence embedding of a text, from a BERT-family GGUF (its pooling) or a chat model
// (its normalized last hidden state at the last token), on any backend (engine/embedding).
#include <cstdio>

#include <nlohmann/json.hpp>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "engine/embedding/embedder.h"

namespace inferscope::cli {

int run_embed(int argc, char** argv) {
  Args args(argc, argv, "embed",
            "Prints the embedding of a text: a BERT-family model's pooled token states (mean, [CLS] or last, as the\n"
            "file says) or a chat model's last hidden state, L2-normalized.\n"
            "Example: inferscope-cli embed --model bge-small-en-v1.5-q8_0.gguf --text \"How do I enable dark mode?\"",
            {kModelOption,
             {"text", "TEXT", "the text to embed (required)"},
             {"no-normalize", nullptr, "print the pooled vector as it is, without L2 normalization"},
             {"json", nullptr, "print {\"embedding\": [...], \"n_embd\": N}"},
             kContextOption,
             kBatchThreadsOption,
             kMmapOption,
             kBackendOption,
             kDeviceOption});
  if (!args.ok()) return args.exit_code();
  if (!args.has("text")) args.fail("--text is required");
  EmbedderOptions options;
  options.n_threads = static_cast<int>(args.integer("threads", 0, 0, 1024));
  options.n_ctx = args.integer("context", 0, 0, int64_t(1) << 20);
  options.normalize = !args.flag("no-normalize");
  if (!args.ok() || !check_backend(args, &options.backend)) return args.exit_code();
  auto model = load_model_from_args(args);
  if (!model) return 1;
  auto embedder = Embedder::create(model, options);
  if (!embedder) return fail(embedder.status());
  auto e = (*embedder)->embed(args.string("text"));
  if (!e) return fail(e.status());
  if (e->truncated) std::fprintf(stderr, "warning: the text was cut to %zu tokens (the context)\n", e->tokens.size());
  if (args.flag("json")) {
    const nlohmann::json out = {{"embedding", e->values}, {"n_embd", e->values.size()}};
    std::printf("%s\n", out.dump().c_str());
    return 0;
  }
  for (size_t i = 0; i < e->values.size(); ++i) std::printf(i ? " %.7g" : "%.7g", e->values[i]);
  std::printf("\n");
  return 0;
}

}  // namespace inferscope::cli
