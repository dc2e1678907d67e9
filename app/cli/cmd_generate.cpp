// generate: stream a completion to stdout; a summary (or one JSON object) at the end.
#include <chrono>
#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "app/cli/route_cli.h"
#include "app/cli/semantic_cache_cli.h"
#include "engine/chat/chat_template.h"
#include "engine/chat/chat_prompt.h"
#include "engine/runtime/draft_model.h"
#include "engine/runtime/session.h"

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

void warn_plain_format(const std::string& reason) {
  std::fprintf(stderr, "warning: the model's chat template is not used: %s\n"
                       "warning: the prompt is sent in the plain \"User: ... / Assistant:\" format instead\n",
               reason.c_str());
}

// --chat: the prompt becomes one user message (after an optional system message) in the
// model's own chat format, and generation stops at the end of the assistant's turn.
Status apply_chat_template(const Model& model, int64_t n_ctx, const std::string& system, GenerateRequest& req) {
  auto tmpl = ChatTemplate::for_chat(model.file(), model.tokenizer());
  if (!tmpl) return tmpl.status();
  if (!tmpl->fallback_reason().empty()) warn_plain_format(tmpl->fallback_reason());
  std::vector<ChatMessage> messages;
  if (!system.empty()) messages.push_back({"system", system});
  messages.push_back({"user", req.prompt});
  auto prompt = build_chat_prompt(model.tokenizer(), *tmpl, std::move(messages), n_ctx, req.max_tokens);
  if (!prompt) return prompt.status();
  if (!prompt->fallback_reason.empty()) warn_plain_format(prompt->fallback_reason);
  req.prompt = std::move(prompt->request.prompt);
  req.parse_special = prompt->request.parse_special;
  req.add_special = prompt->request.add_special;
  req.stop_token_ids = std::move(prompt->request.stop_token_ids);
  return Status::ok();
}

// --semantic-cache: the cache, the embedded prompt, its scope and what the lookup found, with
// the time of each step (setup: opening the database and the embedding model, once per process
// here and once per model in the app).
struct CacheUse {
  std::optional<semantic::SemanticCache> cache;
  std::vector<float> embedding;
  std::string scope;
  semantic::CacheLookup lookup;
  double setup_ms = 0, embed_ms = 0, search_ms = 0;
};

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

Result<CacheUse> look_up(Args& args, std::shared_ptr<const Model> model, const std::string& user_prompt,
                         const std::string& system, const GenerateRequest& req, const SessionOptions& so) {
  auto start = std::chrono::steady_clock::now();
  CacheUse use;
  auto cache = open_semantic_cache(args);
  if (!cache) return cache.status();
  use.cache.emplace(std::move(*cache));
  auto embedder = open_embedder(args, model, so.n_threads);
  if (!embedder) return embedder.status();
  use.setup_ms = ms_since(start);
  start = std::chrono::steady_clock::now();
  auto e = (*embedder)->embed(user_prompt);
  if (!e) return e.status();
  use.embedding = std::move(e->values);
  use.embed_ms = ms_since(start);
  start = std::chrono::steady_clock::now();
  use.scope = request_scope(*model, **embedder, system, req, so);
  auto found = use.cache->lookup(use.scope, user_prompt, use.embedding);
  if (!found) return found.status();
  use.lookup = std::move(*found);
  use.search_ms = ms_since(start);
  return use;
}

nlohmann::json cache_timings_json(const CacheUse& use) {
  return {{"cache_setup_ms", use.setup_ms},
          {"embed_ms", use.embed_ms},
          {"search_ms", use.search_ms},
          {"lookup_ms", use.embed_ms + use.search_ms}};
}

// A hit: the cached reply instead of generating, with where it came from.
int print_cached_reply(const CacheUse& use, bool json) {
  const semantic::CacheHit& hit = *use.lookup.hit;
  if (json) {
    const nlohmann::json j = {{"text", hit.reply},
                              {"stop_reason", "semantic_cache"},
                              {"semantic_cache", cache_lookup_json(use.lookup)},
                              {"timings", cache_timings_json(use)}};
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::printf("%s\n", hit.reply.c_str());
  }
  std::fprintf(stderr, "\nfrom the semantic cache (similarity %.4f; embed %.1f ms, search %.2f ms) for the prompt: %s\n",
               hit.similarity, use.embed_ms, use.search_ms, hit.matched_prompt.c_str());
  return 0;
}

// The cloud's reply, already streamed: the JSON object, or the line end; the summary on stderr.
int print_cloud_reply(const RoutedRequest& routed, bool json) {
  const route::CloudReply& reply = *routed.cloud;
  if (json) {
    const nlohmann::json j = {{"text", reply.text},
                              {"stop_reason", reply.finish_reason},
                              {"route", route_json(routed)},
                              {"timings", {{"ttft_ms", reply.ttft_ms}, {"total_ms", reply.total_ms}}}};
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::printf("\n");
  }
  std::fprintf(stderr, "\nfrom the cloud tier: time to first token %.1f ms, total %.1f ms\n", reply.ttft_ms, reply.total_ms);
  return 0;
}

// The request as the cloud tier receives it: the chat messages with --chat, else the prompt.
CloudAsk cloud_ask(Args& args, bool chat, const std::string& user_prompt) {
  CloudAsk ask;
  if (!chat) {
    ask.prompt = user_prompt;
    return ask;
  }
  if (args.has("system")) ask.messages.push_back({"system", args.string("system")});
  ask.messages.push_back({"user", user_prompt});
  return ask;
}

// --draft-lookup, --draft-layers and --draft-max into *draft (at most one source; --draft-model
// is opened with the session, open_draft_model).
void read_draft_options(Args& args, DraftOptions* draft) {
  const int sources = int{args.has("draft-lookup")} + int{args.has("draft-model")} + int{args.has("draft-layers")};
  if (sources > 1) args.fail("choose one of --draft-lookup, --draft-model and --draft-layers");
  const bool from_a_model = args.has("draft-model") || args.has("draft-layers");
  if (args.has("draft-max") && !from_a_model) args.fail("--draft-max needs --draft-model or --draft-layers");
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
}

// --draft-model: loaded (as --mmap says) and checked against the session's model.
Status open_draft_model(Args& args, Session& session, DraftOptions* draft) {
  ModelLoadOptions options;
  options.resident_weights = !args.flag("mmap");
  auto model = Model::load(args.string("draft-model"), options);
  if (!model) return model.status();
  auto drafter = DraftModel::create(std::move(*model), session.draft_target());
  if (!drafter) return drafter.status();
  draft->source = DraftSource::Model;
  draft->model = std::move(*drafter);
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
             {"draft-max", "N", "with --draft-model or --draft-layers: the longest draft (default 8); the length adapts "
                                "to how much is accepted"},
             kSemanticCacheOption,
             kCacheThresholdOption,
             kEmbeddingModelOption,
             kNoCacheGuardOption,
             kCacheDatabaseOption,
             {"route", "CONFIG", kRouteOptionHelp},
             {"json", nullptr, "print one JSON object instead of streaming text"}},
            session_option_specs()));
  if (!args.ok()) return args.exit_code();
  GenerateRequest req;
  req.prompt = args.string("prompt", "Once upon a time");
  req.max_tokens = static_cast<int32_t>(args.integer("max-tokens", 128, 0, 1 << 20));
  SamplingParams& sp = req.sampling;
  sp.temperature = static_cast<float>(args.number("temperature", sp.temperature, 0.0, 100.0));
  sp.top_k = static_cast<int32_t>(args.integer("top-k", sp.top_k, 0, 1 << 24));
  sp.top_p = static_cast<float>(args.number("top-p", sp.top_p, 0.0, 1.0));
  sp.min_p = static_cast<float>(args.number("min-p", sp.min_p, 0.0, 1.0));
  sp.repeat_penalty = static_cast<float>(args.number("repeat-penalty", sp.repeat_penalty, 0.0, 100.0));
  sp.repeat_last_n = static_cast<int32_t>(args.integer("repeat-last-n", sp.repeat_last_n, -1, 1 << 20));
  sp.frequency_penalty = static_cast<float>(args.number("frequency-penalty", 0.0, -100.0, 100.0));
  sp.presence_penalty = static_cast<float>(args.number("presence-penalty", 0.0, -100.0, 100.0));
  if (args.has("seed")) sp.seed = static_cast<uint64_t>(args.integer("seed", 0, 0, INT64_MAX));
  req.beam_width = static_cast<int32_t>(args.integer("beam-width", 1, 1, 64));
  req.top_logprobs = static_cast<int32_t>(args.integer("top-logprobs", 0, 0, 1000));
  read_draft_options(args, &req.draft);
  SessionOptions so;
  const bool session_ok = read_session_options(args, &so);
  const bool json = args.flag("json");
  const bool chat = args.flag("chat");
  if (args.has("system") && !chat) args.fail("--system needs --chat");
  if (!session_ok || !args.ok()) return args.exit_code();

  auto model = load_model_from_args(args);
  if (!model) return 1;
  auto session = Session::create(model, so);
  if (!session) {
    std::fprintf(stderr, "error: %s\n", session.message().c_str());
    return 1;
  }
  if (args.has("draft-model")) {
    const Status st = open_draft_model(args, **session, &req.draft);
    if (!st) return fail(st);
  }
  const std::string user_prompt = req.prompt;
  std::optional<CacheUse> cached;
  if (args.flag("semantic-cache")) {
    auto use = look_up(args, model, user_prompt, args.string("system"), req, so);
    if (!use) return fail(use.status());
    if (use->lookup.hit) return print_cached_reply(*use, json);
    if (use->lookup.rejected) {
      std::fprintf(stderr, "semantic cache: the guard refused '%s' (similarity %.4f): %s\n",
                   use->lookup.rejected->matched_prompt.c_str(), use->lookup.rejected->similarity,
                   use->lookup.rejected->reason.c_str());
    }
    cached = std::move(*use);
  }
  if (chat) {
    const Status st = apply_chat_template(*model, (*session)->n_ctx(), args.string("system"), req);
    if (!st) {
      std::fprintf(stderr, "error: %s\n", st.message().c_str());
      return 1;
    }
  }
  std::optional<RoutedRequest> routed;
  if (args.has("route")) {
    auto config = route::load_route_config(args.string("route"));
    if (!config) return fail(config.status());
    auto r = route_request(*config, **session, req, cloud_ask(args, chat, user_prompt), json);
    if (!r) return fail(r.status());
    print_route(*r);
    if (r->cloud) return print_cloud_reply(*r, json);
    routed = std::move(*r);
  }
  auto result = (*session)->generate(req, [&](const TokenEvent& e) {
    if (!json) {
      std::fwrite(e.text.data(), 1, e.text.size(), stdout);
      std::fflush(stdout);
    }
    return true;
  });
  if (!result) {
    std::fprintf(stderr, "\nerror: %s\n", result.message().c_str());
    return 1;
  }
  if (cached) {
    auto stored = cached->cache->insert(cached->scope, user_prompt, cached->embedding, result->text);
    if (!stored) std::fprintf(stderr, "warning: the reply was not stored in the semantic cache: %s\n", stored.message().c_str());
  }
  if (json) {
    nlohmann::json j = to_json(*result, req.top_logprobs > 0);
    if (cached) {
      j["semantic_cache"] = cache_lookup_json(cached->lookup);
      j["timings"].update(cache_timings_json(*cached));
    }
    if (routed) j["route"] = route_json(*routed);
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::printf("\n");
  }
  const GenerateTimings& t = result->timings;
  std::fprintf(stderr,
               "\nprompt tokens: %zu, generated: %zu (%s)\n"
               "time to first token: %.1f ms, prefill: %.1f tokens/s, decode: %.1f tokens/s\n",
               result->prompt_token_ids.size(), result->token_ids.size(), result->stop_reason.c_str(), t.ttft_ms,
               t.prefill_tokens_per_s, t.decode_tokens_per_s);
  if (result->draft_tokens > 0) {
    std::fprintf(stderr, "speculative decoding: %lld tokens drafted, %lld accepted (%.0f%%)\n",
                 static_cast<long long>(result->draft_tokens), static_cast<long long>(result->accepted_tokens),
                 100.0 * static_cast<double>(result->accepted_tokens) / static_cast<double>(result->draft_tokens));
  }
  print_memory(result->memory);
  return 0;
}

}  // namespace inferscope::cli
