#include "app/cli/semantic_cache_cli.h"

#include <cstdio>

#include "app/cli/bench_record.h"
#include "app/cli/cli_common.h"

namespace inferscope::cli {

semantic::SemanticCacheOptions semantic_cache_options(Args& args) {
  semantic::SemanticCacheOptions options;
  options.threshold = static_cast<float>(args.number("cache-threshold", options.threshold,
                                                     semantic::SemanticCacheOptions::kMinThreshold,
                                                     semantic::SemanticCacheOptions::kMaxThreshold));
  options.guard_enabled = !args.flag("no-cache-guard");
  return options;
}

std::string semantic_cache_database(Args& args) { return args.string("database", default_database_path()); }

Result<semantic::SemanticCache> open_semantic_cache(Args& args) {
  const semantic::SemanticCacheOptions options = semantic_cache_options(args);
  if (!args.ok()) return Status::error("bad semantic cache options");
  auto cache = semantic::SemanticCache::open_file(semantic_cache_database(args), options);
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
