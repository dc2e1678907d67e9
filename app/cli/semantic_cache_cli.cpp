#include "app/cli/semantic_cache_cli.h"

#include <cstdio>

#include "app/cli/bench_record.h"
#include "app/cli/cli_common.h"
#include "engine/kv/kv_layout.h"
#include "engine/semantic/cache_scope.h"

namespace inferscope::cli {

Result<semantic::SemanticCache> open_semantic_cache(Args& args) {
  semantic::SemanticCacheOptions options;
  options.threshold = static_cast<float>(args.number("cache-threshold", options.threshold,
                                                     semantic::SemanticCacheOptions::kMinThreshold,
                                                     semantic::SemanticCacheOptions::kMaxThreshold));
  options.guard_enabled = !args.flag("no-cache-guard");
  if (!args.ok()) return Status::error("bad semantic cache options");
  auto cache = semantic::SemanticCache::open_file(args.string("database", default_database_path()), options);
  if (cache && !cache->notice().empty()) {
    std::fprintf(stderr, "warning: the semantic cache runs in memory only: %s\n", cache->notice().c_str());
  }
  return cache;
}

Result<std::unique_ptr<Embedder>> open_embedder(Args& args, std::shared_ptr<const Model> chat_model, int threads) {
  std::shared_ptr<const Model> model = std::move(chat_model);
  if (args.has("embedding-model")) {
    auto loaded = Model::load(args.string("embedding-model"));
    if (!loaded) return loaded.status();
    model = *loaded;
  }
  EmbedderOptions options;
  options.n_threads = threads;
  return Embedder::create(std::move(model), options);
}

std::string request_scope(const Model& model, const Embedder& embedder, const std::string& system,
                          const GenerateRequest& request, const SessionOptions& session) {
  semantic::CacheScopeInputs in;
  in.model_identity = model.file_identity();
  in.embedding_model_identity = embedder.identity();
  in.system_prompt = system;
  in.history_policy = semantic::HistoryPolicy::last_turn_only;  // the CLI sends one turn
  const SamplingParams& sp = request.sampling;
  in.sampling.temperature = sp.temperature;
  in.sampling.top_p = sp.top_p;
  in.sampling.top_k = sp.top_k;
  in.sampling.min_p = sp.min_p;
  in.sampling.seed = sp.seed;  // kRandomSeed for an unseeded request
  in.sampling.repeat_penalty = sp.repeat_penalty;
  in.sampling.max_tokens = request.max_tokens;
  in.sampling.other = {{"repeat_last_n", std::to_string(sp.repeat_last_n)},
                       {"frequency_penalty", std::to_string(sp.frequency_penalty)},
                       {"presence_penalty", std::to_string(sp.presence_penalty)},
                       {"beam_width", std::to_string(request.beam_width)},
                       {"add_special", std::to_string(request.add_special)},
                       {"parse_special", std::to_string(request.parse_special)}};
  in.weight_config = "as stored";
  in.kv_config = kv_types_label(session.kv_types) + ",window " + std::to_string(session.cache.kv_window);
  return semantic::cache_scope_key(in);
}

nlohmann::json cache_lookup_json(const semantic::CacheLookup& lookup) {
  nlohmann::json j = {{"hit", lookup.hit.has_value()}};
  if (lookup.hit) {
    j["similarity"] = lookup.hit->similarity;
    j["matched_prompt"] = lookup.hit->matched_prompt;
  } else {
    j["similarity"] = lookup.nearest_similarity ? nlohmann::json(*lookup.nearest_similarity) : nlohmann::json();
    j["matched_prompt"] = nullptr;
  }
  if (lookup.rejected) {
    j["guard_rejected"] = {{"similarity", lookup.rejected->similarity},
                           {"matched_prompt", lookup.rejected->matched_prompt},
                           {"reason", lookup.rejected->reason}};
  }
  return j;
}

}  // namespace inferscope::cli
