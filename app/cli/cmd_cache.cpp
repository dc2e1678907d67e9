// cache: the semantic cache in the app's database (docs/SEMANTIC-CACHE.md).
//   cache list  [--search TEXT] [--scope KEY] [--limit N] [--json]
//   cache stats [--json]
//   cache clear [--scope KEY]
//   cache audit --pairs FILE [--embedding-model FILE | --model FILE] [--cache-threshold X] [--no-cache-guard] [--json]
#include <cstdio>
#include <cstring>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "app/cli/semantic_cache_cli.h"
#include "engine/semantic/cache_audit.h"

namespace inferscope::cli {

namespace {

const OptionSpec kScopeOption{"scope", "KEY", "only this scope (a scope-v1:... key as `cache list` shows)"};
const OptionSpec kJsonOption{"json", nullptr, "print JSON"};

std::string shortened(const std::string& text, size_t n) {
  std::string one_line = text.substr(0, n);
  for (char& c : one_line) c = (c == '\n' || c == '\t') ? ' ' : c;
  return text.size() > n ? one_line + "..." : one_line;
}

std::optional<std::string> scope_of(const Args& args) {
  return args.has("scope") ? std::optional<std::string>(args.string("scope")) : std::nullopt;
}

int run_list(int argc, char** argv) {
  Args args(argc, argv, "cache list", "Lists the semantic cache's entries, most recently used first.",
            {kCacheDatabaseOption, kScopeOption, {"search", "TEXT", "only entries whose prompt or reply contains TEXT"},
             {"limit", "N", "at most N entries (default 100)"}, kJsonOption});
  const auto limit = static_cast<size_t>(args.integer("limit", 100, 1, 1'000'000));
  if (!args.ok()) return args.exit_code();
  auto cache = open_semantic_cache(args);
  if (!cache) return fail(cache.status());
  auto entries = cache->list(scope_of(args), args.string("search"), limit);
  if (!entries) return fail(entries.status());
  if (args.flag("json")) {
    nlohmann::json out = nlohmann::json::array();
    for (const semantic::CachedEntry& e : *entries) {
      out.push_back({{"id", e.id}, {"scope", e.scope_key}, {"prompt", e.prompt}, {"reply", e.reply}, {"hits", e.hits},
                     {"created_at", e.created_at}, {"last_used_at", e.last_used_at}, {"expires_at", e.expires_at},
                     {"bytes", e.bytes}});
    }
    std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  for (const semantic::CachedEntry& e : *entries) {
    std::printf("#%lld  hits %lld  %s\n  prompt: %s\n  reply:  %s\n", static_cast<long long>(e.id),
                static_cast<long long>(e.hits), shortened(e.scope_key, 24).c_str(), shortened(e.prompt, 100).c_str(),
                shortened(e.reply, 100).c_str());
  }
  std::printf("%zu entries\n", entries->size());
  return 0;
}

int run_stats(int argc, char** argv) {
  Args args(argc, argv, "cache stats", "Counts the semantic cache's entries, bytes and hits.",
            {kCacheDatabaseOption, kJsonOption});
  if (!args.ok()) return args.exit_code();
  auto cache = open_semantic_cache(args);
  if (!cache) return fail(cache.status());
  auto entries = cache->list(std::nullopt, "", SIZE_MAX);
  if (!entries) return fail(entries.status());
  int64_t hits = 0;
  std::set<std::string> scopes;
  for (const semantic::CachedEntry& e : *entries) {
    hits += e.hits;
    scopes.insert(e.scope_key);
  }
  const semantic::CacheStats s = cache->stats();
  if (args.flag("json")) {
    const nlohmann::json out = {{"entries", entries->size()}, {"bytes", s.bytes}, {"scopes", scopes.size()},
                                {"hits", hits}, {"threshold", cache->options().threshold},
                                {"persistent", cache->is_persistent()}};
    std::printf("%s\n", out.dump().c_str());
    return 0;
  }
  std::printf("entries %zu in %zu scopes, %s, hits served %lld, threshold %.2f%s\n", entries->size(), scopes.size(),
              format_bytes(static_cast<uint64_t>(s.bytes)).c_str(), static_cast<long long>(hits),
              cache->options().threshold, cache->is_persistent() ? "" : " (memory only)");
  return 0;
}

int run_clear(int argc, char** argv) {
  Args args(argc, argv, "cache clear", "Deletes the semantic cache's entries (of one scope with --scope).",
            {kCacheDatabaseOption, kScopeOption});
  if (!args.ok()) return args.exit_code();
  auto cache = open_semantic_cache(args);
  if (!cache) return fail(cache.status());
  const Status st = args.has("scope") ? cache->invalidate_scope(args.string("scope")) : cache->clear();
  if (!st) return fail(st);
  std::printf("cleared\n");
  return 0;
}

int run_audit(int argc, char** argv) {
  Args args(argc, argv, "cache audit",
            "Measures the cache's decision on labelled prompt pairs with an embedding model: precision, recall and\n"
            "the false hits. FILE: one pair per line, 'prompt A<TAB>prompt B<TAB>same|different'.",
            {{"pairs", "FILE", "the labelled pairs (required)"}, kEmbeddingModelOption, kModelOption,
             kCacheThresholdOption, kNoCacheGuardOption, kBatchThreadsOption, kJsonOption});
  semantic::AuditSettings settings;
  settings.threshold = static_cast<float>(args.number("cache-threshold", settings.threshold,
                                                      semantic::SemanticCacheOptions::kMinThreshold,
                                                      semantic::SemanticCacheOptions::kMaxThreshold));
  settings.guard_enabled = !args.flag("no-cache-guard");
  if (!args.has("pairs")) args.fail("--pairs FILE is required");
  const int threads = static_cast<int>(args.integer("threads", 0, 0, 1024));
  if (!args.ok()) return args.exit_code();
  auto pairs = semantic::read_audit_pairs(args.string("pairs"));
  if (!pairs) return fail(pairs.status());
  std::shared_ptr<const Model> chat_model;
  if (!args.has("embedding-model")) {
    chat_model = load_model_from_args(args);
    if (!chat_model) return 1;
  }
  auto embedder = open_embedder(args, chat_model, threads);
  if (!embedder) return fail(embedder.status());
  auto report = semantic::run_cache_audit(
      *pairs,
      [&](const std::string& text) -> Result<std::vector<float>> {
        auto e = (*embedder)->embed(text);
        if (!e) return e.status();
        return std::move(e->values);
      },
      settings);
  if (!report) return fail(report.status());
  const semantic::AuditReport& r = *report;
  if (args.flag("json")) {
    nlohmann::json false_hits = nlohmann::json::array();
    for (const semantic::AuditCase& c : r.false_hit_cases) {
      false_hits.push_back({{"line", c.pair.line}, {"a", c.pair.prompt_a}, {"b", c.pair.prompt_b}, {"similarity", c.similarity}});
    }
    const nlohmann::json out = {{"pairs", pairs->size()}, {"true_hits", r.true_hits}, {"false_hits", r.false_hits},
                                {"missed", r.missed}, {"correct_misses", r.correct_misses},
                                {"guard_rejections", r.guard_rejections}, {"precision", r.precision()},
                                {"recall", r.recall()}, {"false_hit_cases", false_hits}};
    std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  std::printf("%zu pairs, threshold %.2f, guard %s\nprecision %.3f, recall %.3f (hits: %lld true, %lld false; "
              "missed %lld; guard rejections %lld)\n",
              pairs->size(), settings.threshold, settings.guard_enabled ? "on" : "off", r.precision(), r.recall(),
              static_cast<long long>(r.true_hits), static_cast<long long>(r.false_hits),
              static_cast<long long>(r.missed), static_cast<long long>(r.guard_rejections));
  for (const semantic::AuditCase& c : r.false_hit_cases) {
    std::printf("false hit (line %d, similarity %.4f): '%s' ~ '%s'\n", c.pair.line, c.similarity,
                c.pair.prompt_a.c_str(), c.pair.prompt_b.c_str());
  }
  return 0;
}

}  // namespace

int run_cache(int argc, char** argv) {
  struct Sub {
    const char* name;
    int (*run)(int, char**);
  };
  static const Sub kSubs[] = {{"list", run_list}, {"stats", run_stats}, {"clear", run_clear}, {"audit", run_audit}};
  if (argc >= 2) {
    for (const Sub& s : kSubs) {
      if (std::strcmp(argv[1], s.name) == 0) return s.run(argc - 1, argv + 1);
    }
  }
  std::fprintf(stderr, "usage: inferscope-cli cache list|stats|clear|audit [options] (--help after one for its options)\n");
  return argc >= 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) ? 0 : 2;
}

}  // namespace inferscope::cli
