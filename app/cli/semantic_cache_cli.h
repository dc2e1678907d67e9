// The semantic cache from the CLI (docs/SEMANTIC-CACHE.md): generate's --semantic-cache options
// and the pieces `generate` and `cache` share: the cache's options and database (the app's by
// default), the embedder (a BERT-family GGUF, or the chat model itself), the lookup as JSON.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli/args.h"
#include "engine/embedding/embedder.h"
#include "engine/semantic/semantic_cache.h"

namespace inferscope::cli {

inline const OptionSpec kSemanticCacheOption{
    "semantic-cache", nullptr,
    "answer from the semantic cache when an earlier prompt means the same (same model, system prompt and "
    "settings); otherwise generate and store the reply"};
inline const OptionSpec kCacheThresholdOption{"cache-threshold", "X",
                                              "cosine similarity a cache hit needs, 0.90-0.99 (default 0.97)"};
inline const OptionSpec kEmbeddingModelOption{
    "embedding-model", "FILE", "the cache's embedding model, a BERT-family GGUF (default: the chat model's own hidden state)"};
inline const OptionSpec kNoCacheGuardOption{
    "no-cache-guard", nullptr, "turn the false-hit guard off (it refuses hits whose negations, numbers or names differ)"};
inline const OptionSpec kCacheDatabaseOption{
    "database", "FILE",
    "SQLite database of the semantic cache (default: the desktop app's, $INFERSCOPE_DATABASE or "
    "~/.local/share/Inferscope/Inferscope/inferscope.sqlite)"};

// --cache-threshold and --no-cache-guard (a bad value fails `args`).
semantic::SemanticCacheOptions semantic_cache_options(Args& args);
// --database, or the app's database.
std::string semantic_cache_database(Args& args);

// The cache of --database (or the app's), --cache-threshold and --no-cache-guard applied. A
// file that cannot be used gives a memory-only cache and a warning on stderr.
Result<semantic::SemanticCache> open_semantic_cache(Args& args);

// The embedder of --embedding-model, or of `chat_model` when none is given.
Result<std::unique_ptr<Embedder>> open_embedder(Args& args, std::shared_ptr<const Model> chat_model, int threads);

// generate --json's "semantic_cache" object: {hit, similarity, matched_prompt} (null when the
// scope had no entry).
nlohmann::json cache_lookup_json(const semantic::CacheLookup& lookup);

}  // namespace inferscope::cli
