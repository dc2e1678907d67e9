// compare: the comparison workbench from the command line (engine/compare/comparison.h): a
// baseline and 1-3 candidate configurations on the same prompts, with speed, memory and quality
// against the baseline; recorded in the database like the app's Compare view.
#include <unistd.h>

#include <cstdio>

#include "app/cli/bench_record.h"
#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "engine/compare/comparison_json.h"

namespace inferscope::cli {

namespace {

// One prompt per non-empty line.
std::vector<std::string> prompt_lines(const std::string& text) {
  std::vector<std::string> prompts;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) prompts.push_back(line);
  }
  return prompts;
}

void draw_progress(const ComparisonProgress& p) {
  constexpr int kWidth = 30;
  const int filled = p.total > 0 ? kWidth * p.done / p.total : 0;
  std::fprintf(stderr, "\r[%s%s] %d/%d %-60.60s", std::string(filled, '#').c_str(),
               std::string(kWidth - filled, '.').c_str(), p.done, p.total, p.stage.c_str());
  std::fflush(stderr);
}

std::string quality_cell(const ConfigResult& r, double value, const char* format) {
  if (!r.quality_comparable) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

void print_table(const ComparisonResult& result) {
  std::printf("%-14s %-34s %16s %16s %10s %11s %10s %9s %7s %9s %9s\n", "configuration", "config", "prefill t/s",
              "decode t/s", "TTFT ms", "memory", "KV used", "mean KL", "top-1", "max KL", "PPL");
  for (const ConfigResult& r : result.configs) {
    if (!r.ran) {
      std::printf("%-14s %-34s refused: %s\n", r.config.label.c_str(), compare_config_text(r.config).c_str(),
                  r.refusal.empty() ? "not reached" : r.refusal.c_str());
      continue;
    }
    char prefill[40], decode[40];
    std::snprintf(prefill, sizeof prefill, "%.1f (%.0f-%.0f)", r.prefill_tokens_per_s.median,
                  r.prefill_tokens_per_s.min, r.prefill_tokens_per_s.max);
    std::snprintf(decode, sizeof decode, "%.1f (%.1f-%.1f)", r.decode_tokens_per_s.median, r.decode_tokens_per_s.min,
                  r.decode_tokens_per_s.max);
    const MemoryUsage& m = r.memory;
    const uint64_t total = m.weights_bytes + m.device_weights_bytes + m.kv_cache_bytes + m.scratch_bytes;
    const bool ppl = r.quality_comparable && r.quality.perplexity_positions > 0;
    std::printf("%-14s %-34s %16s %16s %10.1f %11s %10s %9s %7s %9s %9s\n", r.config.label.c_str(),
                compare_config_text(r.config).c_str(), prefill, decode, r.ttft_ms.median, format_bytes(total).c_str(),
                format_bytes(r.kv_bytes_used).c_str(), quality_cell(r, r.quality.mean_kl, "%.5f").c_str(),
                quality_cell(r, 100.0 * r.quality.top1_agreement, "%.1f%%").c_str(),
                quality_cell(r, r.quality.max_kl, "%.4f").c_str(),
                ppl ? quality_cell(r, r.quality.perplexity, "%.3f").c_str() : "-");
  }
}

void print_details(const ComparisonResult& result) {
  for (const ConfigResult& r : result.configs) {
    if (!r.ran) continue;
    const MemoryUsage& m = r.memory;
    std::printf("\n%s (%s, %s):\n  memory: weights %s, KV %s (%s), scratch %s; predicted %s + %s + %s\n",
                r.config.label.c_str(), r.model_name.c_str(), r.backend_name.c_str(),
                format_bytes(m.weights_bytes + m.device_weights_bytes).c_str(), format_bytes(m.kv_cache_bytes).c_str(),
                kv_types_label(r.config.kv_types).c_str(), format_bytes(m.scratch_bytes).c_str(),
                format_bytes(r.predicted.weights_bytes).c_str(), format_bytes(r.predicted.kv_cache_bytes).c_str(),
                format_bytes(r.predicted.scratch_bytes).c_str());
    std::printf("  prompt tokens %lld, reused from the prefix cache %lld\n", static_cast<long long>(r.prompt_tokens),
                static_cast<long long>(r.reused_tokens));
    if (r.quality_comparable && r.quality.positions > 0) {
      std::printf("  quality over %lld positions; largest KL %.4f at sequence %d, position %lld (next token '%s')\n",
                  static_cast<long long>(r.quality.positions), r.quality.max_kl, r.quality.worst.sequence,
                  static_cast<long long>(r.quality.worst.position), r.worst_token_text.c_str());
    } else if (!r.quality_note.empty()) {
      std::printf("  quality: %s\n", r.quality_note.c_str());
    }
  }
  for (size_t p = 0; p < result.options.prompts.size(); ++p) {
    std::printf("\nprompt %zu: %s\n", p + 1, result.options.prompts[p].c_str());
    for (const ConfigResult& r : result.configs) {
      if (p < r.replies.size()) std::printf("  [%s] %s\n", r.config.label.c_str(), r.replies[p].c_str());
    }
  }
}

}  // namespace

int run_compare(int argc, char** argv) {
  Args args(argc, argv, "compare",
            "Runs a baseline and 1-3 candidate configurations on the same prompts and compares speed, memory and\n"
            "quality (KL divergence, top-1 agreement, perplexity; teacher-forced on the baseline's tokens).\n"
            "A CONFIG is key=value,... or a JSON object: model, weights (requantize on load: q8_0, q4_k_m, ...),\n"
            "cache-type-k, cache-type-v, kv-block-size, cache-budget, prefix-cache, kv-window, kv-sinks,\n"
            "context-shift, backend, device, threads, context, label.\n"
            "Example: inferscope-cli compare --model m.gguf --baseline weights=f16 --candidate weights=q4_k_m\n"
            "         --candidate weights=q4_k_m,cache-type-k=q4_0,cache-type-v=q4_0 --prompts prompts.txt",
            {kModelOption,
             {"baseline", "CONFIG", "the baseline configuration (default: the model as stored, defaults)"},
             {"candidate", "CONFIG", "a candidate configuration (1-3 times)"},
             {"prompts", "FILE", "prompts, one per line"},
             {"prompt", "TEXT", "a prompt (repeatable; added after --prompts)"},
             {"text", "FILE", "text for the perplexity (and more KL positions); default: the baseline's replies"},
             {"reps", "N", "timing repetitions, alternating the configurations (default 3)"},
             {"max-tokens", "N", "tokens per reply (default 64)"},
             {"chat", nullptr, "each prompt as a user turn in the model's chat template (default: plain completions)"},
             {"temperature", "T", "sample instead of greedy (default 0: greedy)"},
             {"seed", "N", "the shared seed of a sampled comparison (default 42)"},
             {"json", nullptr, "print the comparison as JSON"},
             kDatabaseOption,
             kNoRecordOption});
  if (!args.ok()) return args.exit_code();
  ComparisonOptions options;
  options.default_model = args.string("model", default_model_path());
  auto baseline = parse_compare_config(args.string("baseline", ""));
  if (!baseline) args.fail("--baseline: " + baseline.message());
  else options.configs.push_back(*baseline);
  for (const std::string& text : args.strings("candidate")) {
    auto candidate = parse_compare_config(text);
    if (!candidate) args.fail("--candidate " + text + ": " + candidate.message());
    else options.configs.push_back(*candidate);
  }
  if (args.ok() && (options.configs.size() < 2 || options.configs.size() > 4)) {
    args.fail("give 1 to 3 --candidate configurations");
  }
  if (args.has("prompts")) {
    std::string text;
    if (!read_file(args.string("prompts"), &text)) args.fail("cannot read --prompts " + args.string("prompts"));
    options.prompts = prompt_lines(text);
  }
  for (const std::string& p : args.strings("prompt")) options.prompts.push_back(p);
  if (args.ok() && options.prompts.empty()) args.fail("no prompts: give --prompts FILE or --prompt TEXT");
  if (args.has("text") && !read_file(args.string("text"), &options.quality_text)) {
    args.fail("cannot read --text " + args.string("text"));
  }
  options.reps = static_cast<int>(args.integer("reps", 3, 1, 1000));
  options.max_tokens = static_cast<int32_t>(args.integer("max-tokens", 64, 1, 1 << 20));
  options.chat = args.flag("chat");
  options.sampling.temperature = static_cast<float>(args.number("temperature", 0.0, 0.0, 100.0));
  if (options.sampling.temperature > 0) options.sampling.seed = static_cast<uint64_t>(args.integer("seed", 42, 0, INT64_MAX));
  if (!args.ok()) return args.exit_code();

  ComparisonCallbacks callbacks;
  if (isatty(STDERR_FILENO)) callbacks.on_progress = draw_progress;
  auto result = run_comparison(options, callbacks);
  if (callbacks.on_progress) std::fprintf(stderr, "\n");
  if (!result) {
    std::fprintf(stderr, "error: %s\n", result.message().c_str());
    return 1;
  }
  if (args.flag("json")) {
    std::printf("%s\n", comparison_json(*result, 2).c_str());
  } else {
    print_table(*result);
    print_details(*result);
  }
  record_compare_run(args, *result);
  return result->configs.front().ran ? 0 : 1;
}

}  // namespace inferscope::cli
