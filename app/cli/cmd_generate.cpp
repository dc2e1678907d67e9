// generate: stream a completion to stdout; a summary (or one JSON object) at the end. The reply
// is the engine's pipeline (engine/reply): the semantic cache, routing and drafts are its.
#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "app/cli/route_cli.h"
#include "app/cli/semantic_cache_cli.h"
#include "engine/reply/reply_pipeline.h"
#include "engine/route/route_config.h"

namespace inferscope::cli {

namespace {

nlohmann::json to_json(const GenerateResult& r, bool with_steps) {
  nlohmann::json j;
  j["prompt_token_ids"] = r.prompt_token_ids;
  j["token_ids"] = r.token_ids;
  j["text"] = r.text;
  j["stop_reason"] = r.stop_reason;
  j["timings"] = {{"ttft_ms", r.timings.ttft_ms},
                  {"prefill_ms", r.timings.prefill_ms},
                  {"decode_ms", r.timings.decode_ms},
                  {"prefill_tokens_per_s", r.timings.prefill_tokens_per_s},
                  {"decode_tokens_per_s", r.timings.decode_tokens_per_s},
                  {"ttft_saved_ms", r.timings.ttft_saved_ms}};
  j["reused_tokens"] = r.reused_tokens;
  j["context_shifts"] = r.context_shifts;
  j["draft_tokens"] = r.draft_tokens;
  j["accepted_tokens"] = r.accepted_tokens;
  j["memory"] = memory_json(r.memory);
  if (with_steps) {
    nlohmann::json steps = nlohmann::json::array();
    for (size_t i = 0; i < r.steps.size(); ++i) {
      nlohmann::json top = nlohmann::json::array();
      for (const TokenLogprob& t : r.steps[i]) top.push_back({{"id", t.id}, {"logprob", t.logprob}});
      steps.push_back({{"id", r.token_ids[i]}, {"top_logprobs", top}});
    }
    j["steps"] = steps;
  }
  return j;
}

nlohmann::json cache_timings_json(const reply::CacheReport& cache) {
  return {{"cache_setup_ms", cache.setup_ms},
          {"embed_ms", cache.embed_ms},
          {"search_ms", cache.search_ms},
          {"lookup_ms", cache.embed_ms + cache.search_ms}};
}

void print_json(const nlohmann::json& j) {
  std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

// The reply as it comes: its text on stdout (unless --json), the route and notices on stderr.
class TerminalSink : public reply::ReplySink {
 public:
  explicit TerminalSink(bool json) : json_(json) {}

  void answering(const reply::ReplyHead& head) override {
    if (head.route) print_route(head);
  }
  // The answer on stdout; the model's thinking before it on stderr.
  bool text(const reply::ReplyPiece& piece) override {
    if (!json_) {
      FILE* out = piece.reasoning ? stderr : stdout;
      std::fwrite(piece.text.data(), 1, piece.text.size(), out);
      std::fflush(out);
    }
    return true;
  }
  void notice(reply::ReplyNotice kind, const std::string& message) override {
    switch (kind) {
      case reply::ReplyNotice::ChatFormat:
        std::fprintf(stderr, "warning: the model's chat template is not used: %s\n"
                             "warning: the prompt is sent in the plain \"User: ... / Assistant:\" format instead\n",
                     message.c_str());
        return;
      case reply::ReplyNotice::CacheGuard:
        std::fprintf(stderr, "semantic cache: %s\n", message.c_str());
        return;
      case reply::ReplyNotice::RouteTierFailed:
      case reply::ReplyNotice::RouteFallback:
        return;  // the route's lines say it (print_route)
      default:
        std::fprintf(stderr, "warning: %s\n", message.c_str());
    }
  }

 private:
  bool json_;
};

// A reply from the semantic cache: its text, with where it came from.
int print_cached_reply(const reply::ReplyOutcome& outcome, bool json) {
  const reply::CacheReport& cache = *outcome.head.cache;
  const semantic::CacheHit& hit = *cache.lookup.hit;
  if (json) {
    print_json({{"text", hit.reply},
                {"stop_reason", "semantic_cache"},
                {"semantic_cache", cache_lookup_json(cache.lookup)},
                {"timings", cache_timings_json(cache)}});
  } else {
    std::printf("\n");
  }
  std::fprintf(stderr, "\nfrom the semantic cache (similarity %.4f; embed %.1f ms, search %.2f ms) for the prompt: %s\n",
               hit.similarity, cache.embed_ms, cache.search_ms, hit.matched_prompt.c_str());
  return 0;
}

// The cloud's reply, already streamed: the JSON object, or the line end; the summary on stderr.
int print_cloud_reply(const reply::ReplyOutcome& outcome, bool json) {
  const route::CloudReply& reply = *outcome.cloud;
  if (json) {
    print_json({{"text", reply.text},
                {"stop_reason", reply.finish_reason},
                {"route", route_json(outcome.head)},
                {"timings", {{"ttft_ms", reply.ttft_ms}, {"total_ms", reply.total_ms}}}});
  } else {
    std::printf("\n");
  }
  std::fprintf(stderr, "\nfrom the cloud tier: time to first token %.1f ms, total %.1f ms\n", reply.ttft_ms, reply.total_ms);
  return 0;
}

// The local model's reply, already streamed: the JSON object or the line end, then the summary.
int print_local_reply(const reply::ReplyOutcome& outcome, bool json, bool steps) {
  const GenerateResult& result = *outcome.local;
  if (json) {
    nlohmann::json j = to_json(result, steps);
    j["text"] = outcome.text;  // the answer, cut at a stop string, without the thinking
    if (!outcome.reasoning.empty()) j["reasoning"] = outcome.reasoning;
    if (const auto& cache = outcome.head.cache) {
      j["semantic_cache"] = cache_lookup_json(cache->lookup);
      j["timings"].update(cache_timings_json(*cache));
    }
    if (outcome.head.route) j["route"] = route_json(outcome.head);
    print_json(j);
  } else {
    std::printf("\n");
  }
  const GenerateTimings& t = result.timings;
  std::fprintf(stderr,
               "\nprompt tokens: %zu, generated: %zu (%s)\n"
               "time to first token: %.1f ms, prefill: %.1f tokens/s, decode: %.1f tokens/s\n",
               result.prompt_token_ids.size(), result.token_ids.size(), result.stop_reason.c_str(), t.ttft_ms,
               t.prefill_tokens_per_s, t.decode_tokens_per_s);
  if (result.draft_tokens > 0) {
    std::fprintf(stderr, "speculative decoding: %lld tokens drafted, %lld accepted (%.0f%%)\n",
                 static_cast<long long>(result.draft_tokens), static_cast<long long>(result.accepted_tokens),
                 100.0 * static_cast<double>(result.accepted_tokens) / static_cast<double>(result.draft_tokens));
  }
  print_memory(result.memory);
  return 0;
}

// --draft-lookup, --draft-model, --draft-layers, --draft-mtp and --draft-max (at most one source).
void read_draft_options(Args& args, reply::DraftSettings* draft) {
  const int sources = int{args.has("draft-lookup")} + int{args.has("draft-model")} + int{args.has("draft-layers")} +
                      int{args.has("draft-mtp")};
  if (sources > 1) args.fail("choose one of --draft-lookup, --draft-model, --draft-layers and --draft-mtp");
  const bool from_a_model = args.has("draft-model") || args.has("draft-layers") || args.has("draft-mtp");
  if (args.has("draft-max") && !from_a_model) {
    args.fail("--draft-max needs --draft-model, --draft-layers or --draft-mtp");
  }
  if (args.flag("draft-mtp")) draft->source = DraftSource::Mtp;
  draft->max_tokens = static_cast<int32_t>(args.integer("draft-max", draft->max_tokens, 1, 64));
  const auto lookup = static_cast<int32_t>(args.integer("draft-lookup", 0, 0, 64));
  if (lookup > 0) {
    draft->source = DraftSource::Lookup;
    draft->max_tokens = lookup;
  }
  if (args.has("draft-layers")) {
    draft->source = DraftSource::LayerSkip;
    draft->layers = static_cast<int32_t>(args.integer("draft-layers", 1, 1, 1 << 16));
  }
  if (args.has("draft-model")) {
    draft->source = DraftSource::Model;
    draft->model_path = args.string("draft-model");
    draft->resident_weights = !args.flag("mmap");
  }
}

// --prompt as it is, or with --chat one user message (after --system's) in the model's format.
void read_prompt(Args& args, reply::ReplyRequest* request) {
  const std::string prompt = args.string("prompt", "Once upon a time");
  if (!args.flag("chat")) {
    request->prompt = prompt;
    return;
  }
  if (args.has("system")) request->messages.push_back({"system", args.string("system")});
  request->messages.push_back({"user", prompt});
}

// The pipeline's semantic cache (--semantic-cache) and routing (--route).
Status configure_pipeline(Args& args, reply::ReplyPipeline& pipeline) {
  if (args.flag("semantic-cache")) {
    auto cache = reply::ReplyCache::open(semantic_cache_database(args), semantic_cache_options(args));
    if (!cache) return cache.status();
    pipeline.set_cache(std::move(*cache));
  }
  if (args.has("route")) {
    auto config = route::load_route_config(args.string("route"));
    if (!config) return config.status();
    std::shared_ptr<reply::ReplyRouting> routing = reply::ReplyRouting::create(std::move(*config));
    for (const std::string& why : routing->unreachable()) {
      std::fprintf(stderr, "route: the cloud tier is not reachable: %s\n", why.c_str());
    }
    pipeline.set_routing(std::move(routing));
  }
  return Status::ok();
}

}  // namespace

int run_generate(int argc, char** argv) {
  Args args(argc, argv, "generate", "Generates text from a prompt, streaming it to stdout.",
            joined({kModelOption,
             {"prompt", "TEXT", "the prompt (default: \"Once upon a time\")"},
             {"chat", nullptr, "send the prompt as a user message through the model's chat template; stop at the end of the turn"},
             {"system", "TEXT", "with --chat: a system message before the prompt"},
             {"max-tokens", "N", "tokens to generate at most (default 128)"},
             {"temperature", "T", "sampling temperature; 0 = greedy (default 0.8)"},
             {"top-k", "K", "keep the K most likely tokens; 0 = off (default 40)"},
             {"top-p", "P", "nucleus sampling threshold; 1 = off (default 0.95)"},
             {"min-p", "M", "drop tokens below M x the top probability; 0 = off (default 0.05)"},
             {"repeat-penalty", "R", "repetition penalty; 1 = off (default 1.0)"},
             {"repeat-last-n", "N", "tokens the penalties look back over (default 64)"},
             {"frequency-penalty", "F", "frequency penalty (default 0)"},
             {"presence-penalty", "P", "presence penalty (default 0)"},
             {"seed", "S", "random seed (default: random)"},
             {"beam-width", "W", "beam search with W beams (deterministic; default 1 = off)"},
             {"top-logprobs", "K", "with --json: the K most likely tokens per step with log-probabilities"},
             {"draft-lookup", "N", "speculative decoding: drafts of up to N tokens looked up in the context, verified "
                                   "in one step (the output is the same; default 0 = off)"},
             {"draft-model", "FILE", "speculative decoding: a smaller GGUF model with the same vocabulary drafts up to "
                                     "--draft-max tokens, verified in one step (the output is the same)"},
             {"draft-layers", "L", "speculative decoding: the model's own first L layers draft up to --draft-max tokens "
                                   "(self-drafting, no second file; the output is the same)"},
             {"draft-mtp", nullptr, "speculative decoding: the model's own multi-token-prediction layers (Qwen3.5 "
                                    "files that have them) draft up to --draft-max tokens (the output is the same)"},
             {"draft-max", "N", "with --draft-model, --draft-layers or --draft-mtp: the longest draft (default 8); the "
                                "length adapts to how much is accepted"},
             kSemanticCacheOption,
             kCacheThresholdOption,
             kEmbeddingModelOption,
             kNoCacheGuardOption,
             kCacheDatabaseOption,
             {"route", "CONFIG", kRouteOptionHelp},
             {"json", nullptr, "print one JSON object instead of streaming text"}},
            session_option_specs()));
  if (!args.ok()) return args.exit_code();
  reply::ReplyRequest request;
  read_prompt(args, &request);
  request.max_tokens = static_cast<int32_t>(args.integer("max-tokens", 128, 0, 1 << 20));
  SamplingParams& sp = request.sampling;
  sp.temperature = static_cast<float>(args.number("temperature", sp.temperature, 0.0, 100.0));
  sp.top_k = static_cast<int32_t>(args.integer("top-k", sp.top_k, 0, 1 << 24));
  sp.top_p = static_cast<float>(args.number("top-p", sp.top_p, 0.0, 1.0));
  sp.min_p = static_cast<float>(args.number("min-p", sp.min_p, 0.0, 1.0));
  sp.repeat_penalty = static_cast<float>(args.number("repeat-penalty", sp.repeat_penalty, 0.0, 100.0));
  sp.repeat_last_n = static_cast<int32_t>(args.integer("repeat-last-n", sp.repeat_last_n, -1, 1 << 20));
  sp.frequency_penalty = static_cast<float>(args.number("frequency-penalty", 0.0, -100.0, 100.0));
  sp.presence_penalty = static_cast<float>(args.number("presence-penalty", 0.0, -100.0, 100.0));
  if (args.has("seed")) sp.seed = static_cast<uint64_t>(args.integer("seed", 0, 0, INT64_MAX));
  request.beam_width = static_cast<int32_t>(args.integer("beam-width", 1, 1, 64));
  request.top_logprobs = static_cast<int32_t>(args.integer("top-logprobs", 0, 0, 1000));
  read_draft_options(args, &request.draft);
  request.cache.enabled = args.flag("semantic-cache");
  request.cache.embedding_model = args.string("embedding-model");
  SessionOptions so;
  const bool session_ok = read_session_options(args, &so);
  so.mtp = request.draft.source == DraftSource::Mtp;
  const bool json = args.flag("json");
  if (args.has("system") && !args.flag("chat")) args.fail("--system needs --chat");
  if (!session_ok || !args.ok()) return args.exit_code();

  auto model = load_model_from_args(args);
  if (!model) return 1;
  auto session = open_session(model, so);
  if (!session) return 1;
  auto pipeline = reply::ReplyPipeline::create(*session);
  if (!pipeline) return fail(pipeline.status());
  const Status configured = configure_pipeline(args, **pipeline);
  if (!configured) return fail(configured);

  TerminalSink sink(json);
  reply::ReplyResult answered = (*pipeline)->answer(request, sink);
  if (auto* error = std::get_if<reply::ReplyError>(&answered)) {
    std::fprintf(stderr, "\nerror: %s\n", error->message.c_str());
    return 1;
  }
  const reply::ReplyOutcome& outcome = std::get<reply::ReplyOutcome>(answered);
  switch (outcome.head.source) {
    case reply::ReplySource::SemanticCache:
      return print_cached_reply(outcome, json);
    case reply::ReplySource::Cloud:
    case reply::ReplySource::CloudForwarded:
      return print_cloud_reply(outcome, json);
    case reply::ReplySource::Local:
      break;
  }
  return print_local_reply(outcome, json, request.top_logprobs > 0);
}

}  // namespace inferscope::cli
