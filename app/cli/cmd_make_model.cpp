// make-model: write a random-weight GGUF of a chosen architecture and shape for benchmarks.
#include <chrono>
#include <cstdio>
#include <string>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "engine/model/random_model.h"

namespace inferscope::cli {

int run_make_model(int argc, char** argv) {
  const std::string preset_help = random_model_preset_names() + " (flags below override it)";
  Args args(argc, argv, "make-model",
            "Writes a random-weight GGUF (llama/mistral, qwen2, qwen3, phi3, gemma, gemma2; the MoE ones\n"
            "through their presets) with the tokenizer of\n"
            "another GGUF.\n"
            "Example (TinyLlama 1.1B shape, Llama 2 vocabulary):\n"
            "  inferscope-cli make-model --preset tinyllama-1.1b --type q4_0 \\\n"
            "      --vocab ../shared/testdata/llama.cpp-vocab/ggml-vocab-llama-spm.gguf --output tinyllama-q4_0.gguf",
            {{"output", "FILE", "where to write the GGUF (required)"},
             {"vocab", "FILE", "GGUF to copy the tokenizer from (default: the bundled model)"},
             {"preset", "NAME", preset_help.c_str()},
             {"arch", "NAME", "llama (default), qwen2, qwen3, phi3, gemma or gemma2"},
             {"type", "TYPE", "file type as in quantize: f32, f16, bf16, q8_0, q4_0, q4_k_m, q6_k... (default f16)"},
             {"pure", nullptr, "every matrix gets TYPE (no llama.cpp per-tensor mix rules)"},
             {"embd", "N", "embedding size"},
             {"layers", "N", "transformer blocks"},
             {"heads", "N", "attention heads"},
             {"head-dim", "N", "key/value head size (default: embedding size / heads)"},
             {"window", "N", "sliding attention window (phi3: all layers, gemma2: even layers); 0 = none"},
             {"kv-heads", "N", "key/value heads (grouped-query attention)"},
             {"ff", "N", "feed-forward size (per expert with --experts)"},
             {"experts", "N", "experts per layer (Mixtral layout); 0 = dense"},
             {"experts-used", "N", "experts routed per token"},
             {"context", "N", "context length written to the file"},
             {"tied", nullptr, "no output.weight (the output reuses token_embd)"},
             {"name", "TEXT", "general.name"},
             {"seed", "S", "random seed (default 1)"}});
  if (!args.ok()) return args.exit_code();
  RandomModelSpec spec;
  RandomModelShape& s = spec.shape;
  if (args.has("preset") && !random_model_preset(args.string("preset"), &s)) {
    args.fail("unknown preset '" + args.string("preset") + "'");
    return args.exit_code();
  }
  s.n_embd = args.integer("embd", s.n_embd, 1, 1 << 16);
  s.n_layer = args.integer("layers", s.n_layer, 1, 512);
  s.arch = args.string("arch", s.arch);
  s.n_head = args.integer("heads", s.n_head, 1, 1024);
  s.head_dim = args.integer("head-dim", s.head_dim, 0, 1024);
  s.n_swa = args.integer("window", s.n_swa, 0, 1 << 24);
  s.n_head_kv = args.integer("kv-heads", std::min(s.n_head_kv, s.n_head), 1, 1024);
  s.n_ff = args.integer("ff", s.n_ff, 1, 1 << 20);
  s.n_expert = args.integer("experts", s.n_expert, 0, 256);
  s.n_expert_used = args.integer("experts-used", s.n_expert > 0 ? std::max<int64_t>(1, s.n_expert_used) : 0, 0, 256);
  s.n_ctx = args.integer("context", s.n_ctx, 1, 1 << 24);
  s.tied_output = s.tied_output || args.flag("tied");
  spec.seed = static_cast<uint64_t>(args.integer("seed", 1, 0, INT64_MAX));
  spec.name = args.string("name", args.string("preset", "random-llama"));
  spec.vocab_path = args.string("vocab", default_model_path());
  const auto mix = quant_mix_from_name(args.string("type", "f16"), args.flag("pure"));
  if (!mix) args.fail("--type must be one of " + quant_mix_names());
  if (!args.has("output")) args.fail("--output FILE is required");
  if (!args.ok()) return args.exit_code();
  spec.mix = *mix;
  const auto t0 = std::chrono::steady_clock::now();
  Status st = write_random_model(spec, args.string("output"));
  if (!st) {
    std::fprintf(stderr, "error: %s\n", st.message().c_str());
    return 1;
  }
  std::fprintf(stderr, "wrote %s in %.1f s\n", args.string("output").c_str(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return 0;
}

}  // namespace inferscope::cli
