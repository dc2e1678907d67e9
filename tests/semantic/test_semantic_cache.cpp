// The cache policy, in memory and through a store: scope isolation, the threshold, the guard,
// LRU eviction by count and bytes, TTL with an injected clock, persistence across a restart,
// listing and removal.
#include <gtest/gtest.h>

#include "engine/semantic/cache_scope.h"
#include "engine/semantic/semantic_cache.h"
#include "tests/semantic/semantic_test_support.h"
#include "tests/support/scratch_dir.h"

namespace inferscope::semantic {
namespace {

using testing::at_cosine;
using testing::basis;
using testing::ManualClock;

constexpr std::size_t kDim = 8;

SemanticCacheOptions options_on(const ManualClock& clock) {
  SemanticCacheOptions options;
  options.now_ms = clock;
  return options;
}

SemanticCache memory_cache(const SemanticCacheOptions& options) {
  Result<SemanticCache> cache = SemanticCache::in_memory(options);
  EXPECT_TRUE(cache) << cache.message();
  return std::move(cache).value();
}

std::string scratch_database(const std::string& test) {
  return (inferscope::testing::scratch_dir("semantic-" + test) / "cache.sqlite").string();
}

SemanticCache file_cache(const std::string& path, const SemanticCacheOptions& options) {
  Result<SemanticCache> cache = SemanticCache::open_file(path, options);
  EXPECT_TRUE(cache) << cache.message();
  EXPECT_TRUE(cache->is_persistent()) << cache->notice();
  return std::move(cache).value();
}

// The reply served for (scope, prompt, embedding), or "" on a miss.
std::string served(SemanticCache& cache, const std::string& scope, const std::string& prompt,
                   const std::vector<float>& embedding) {
  Result<CacheLookup> found = cache.lookup(scope, prompt, embedding);
  EXPECT_TRUE(found) << found.message();
  return found && found->hit ? found->hit->reply : "";
}

CacheScopeInputs base_scope() {
  CacheScopeInputs in;
  in.model_identity = "model.gguf|1000|1";
  in.embedding_model_identity = "minilm";
  in.system_prompt = "Be helpful.";
  in.sampling.temperature = 0.0;
  return in;
}

TEST(SemanticCache, ScopesNeverShareReplies) {
  ManualClock clock;
  SemanticCache cache = memory_cache(options_on(clock));
  const std::string scope = cache_scope_key(base_scope());
  ASSERT_TRUE(cache.insert(scope, "What is the capital of France?", basis(kDim, 0), "Paris."));
  EXPECT_EQ(served(cache, scope, "What is the capital of France?", basis(kDim, 0)), "Paris.");

  CacheScopeInputs other_model = base_scope(), other_system = base_scope(), other_settings = base_scope(),
                   other_history = base_scope(), other_embedder = base_scope();
  other_model.model_identity = "other.gguf|2000|1";
  other_system.system_prompt = "Answer in French.";
  other_settings.sampling.temperature = 0.8;
  other_history.history = {{"user", "Let's talk about Spain."}, {"assistant", "Sure."}};
  other_embedder.embedding_model_identity = "bge";
  for (const CacheScopeInputs& in : {other_model, other_system, other_settings, other_history, other_embedder}) {
    EXPECT_EQ(served(cache, cache_scope_key(in), "What is the capital of France?", basis(kDim, 0)), "");
  }
}

TEST(SemanticCache, ThresholdEdges) {
  ManualClock clock;
  SemanticCache cache = memory_cache(options_on(clock));  // threshold 0.97
  ASSERT_TRUE(cache.insert("s", "How do I reverse a list in Python?", basis(kDim, 0), "Use reversed()."));
  EXPECT_EQ(served(cache, "s", "How can I reverse a list in Python?", at_cosine(kDim, 0, 0.9705)), "Use reversed().");
  Result<CacheLookup> below = cache.lookup("s", "How can I reverse a list in Python?", at_cosine(kDim, 0, 0.9695));
  ASSERT_TRUE(below) << below.message();
  EXPECT_FALSE(below->hit);
  ASSERT_TRUE(below->nearest_similarity);
  EXPECT_NEAR(*below->nearest_similarity, 0.9695f, 1e-6);

  ASSERT_TRUE(cache.set_threshold(0.95f));
  EXPECT_EQ(served(cache, "s", "How can I reverse a list in Python?", at_cosine(kDim, 0, 0.9695)), "Use reversed().");
  EXPECT_FALSE(cache.set_threshold(0.89f));
  EXPECT_FALSE(cache.set_threshold(0.995f));
  EXPECT_EQ(cache.options().threshold, 0.95f);
}

TEST(SemanticCache, EmbeddingsAreScaledToUnitLength) {
  ManualClock clock;
  SemanticCache cache = memory_cache(options_on(clock));
  std::vector<float> long_vector = basis(kDim, 2);
  long_vector[2] = 37.0f;
  ASSERT_TRUE(cache.insert("s", "hello there", long_vector, "Hi!"));
  Result<CacheLookup> found = cache.lookup("s", "hello there", basis(kDim, 2));
  ASSERT_TRUE(found && found->hit);
  EXPECT_FLOAT_EQ(found->hit->similarity, 1.0f);
  EXPECT_FALSE(cache.lookup("s", "hello there", std::vector<float>(kDim, 0.0f)));  // no direction
  EXPECT_FALSE(cache.lookup("s", "hello there", basis(4, 0)));                      // another dimension
}

TEST(SemanticCache, GuardRejectsAMeaningFlipAndSaysWhy) {
  ManualClock clock;
  SemanticCache cache = memory_cache(options_on(clock));
  ASSERT_TRUE(cache.insert("s", "How do I enable dark mode?", basis(kDim, 0), "Settings > Appearance > Dark."));
  Result<CacheLookup> flip = cache.lookup("s", "How do I disable dark mode?", at_cosine(kDim, 0, 0.99));
  ASSERT_TRUE(flip) << flip.message();
  EXPECT_FALSE(flip->hit);
  ASSERT_TRUE(flip->rejected);
  EXPECT_EQ(flip->rejected->matched_prompt, "How do I enable dark mode?");
  EXPECT_EQ(flip->rejected->reason, "opposite meaning: 'enable' vs 'disable'");
  EXPECT_EQ(cache.stats().guard_rejections, 1);

  cache.set_guard_enabled(false);
  EXPECT_EQ(served(cache, "s", "How do I disable dark mode?", at_cosine(kDim, 0, 0.99)), "Settings > Appearance > Dark.");
}

TEST(SemanticCache, ALessSimilarCandidateServesWhenTheBestIsRejected) {
  ManualClock clock;
  SemanticCache cache = memory_cache(options_on(clock));
  ASSERT_TRUE(cache.insert("s", "How do I disable dark mode?", basis(kDim, 0), "off"));
  ASSERT_TRUE(cache.insert("s", "How do I enable dark mode?", at_cosine(kDim, 0, 0.98), "on"));
  Result<CacheLookup> found = cache.lookup("s", "how can I turn on dark mode", basis(kDim, 0));
  ASSERT_TRUE(found && found->hit);
  EXPECT_EQ(found->hit->reply, "on");
  ASSERT_TRUE(found->rejected);
  EXPECT_EQ(found->rejected->matched_prompt, "How do I disable dark mode?");
}

TEST(SemanticCache, LeastRecentlyUsedGoesFirstWhenTheCountIsFull) {
  ManualClock clock;
  SemanticCacheOptions options = options_on(clock);
  options.max_entries = 3;
  SemanticCache cache = memory_cache(options);
  const char* prompts[] = {"alpha question", "beta question", "gamma question", "delta question"};
  for (std::size_t i = 0; i < 3; ++i) ASSERT_TRUE(cache.insert("s", prompts[i], basis(kDim, i), prompts[i]));
  EXPECT_EQ(served(cache, "s", prompts[0], basis(kDim, 0)), prompts[0]);  // alpha is now the most recent
  ASSERT_TRUE(cache.insert("s", prompts[3], basis(kDim, 3), prompts[3]));
  EXPECT_EQ(cache.stats().entries, 3u);
  EXPECT_EQ(served(cache, "s", prompts[1], basis(kDim, 1)), "");  // beta was the least recently used
  for (std::size_t i : {0, 2, 3}) EXPECT_EQ(served(cache, "s", prompts[i], basis(kDim, i)), prompts[i]);
}

TEST(SemanticCache, EvictsByBytes) {
  ManualClock clock;
  SemanticCacheOptions options = options_on(clock);
  const std::int64_t entry_bytes = 5 + 5 + kDim * 4;  // "aaaaa" + "reply" + 8 floats
  options.max_bytes = 2 * entry_bytes;
  SemanticCache cache = memory_cache(options);
  ASSERT_TRUE(cache.insert("s", "aaaaa", basis(kDim, 0), "reply"));
  ASSERT_TRUE(cache.insert("s", "bbbbb", basis(kDim, 1), "reply"));
  EXPECT_EQ(cache.stats().bytes, 2 * entry_bytes);
  ASSERT_TRUE(cache.insert("s", "ccccc", basis(kDim, 2), "reply"));
  EXPECT_EQ(cache.stats().entries, 2u);
  EXPECT_EQ(cache.stats().bytes, 2 * entry_bytes);
  EXPECT_EQ(served(cache, "s", "aaaaa", basis(kDim, 0)), "");
  EXPECT_EQ(served(cache, "s", "bbbbb", basis(kDim, 1)), "reply");

  Result<std::int64_t> too_big = cache.insert("s", std::string(200, 'x'), basis(kDim, 3), "reply");
  ASSERT_FALSE(too_big);
  EXPECT_NE(too_big.message().find("larger than the cache's limit"), std::string::npos) << too_big.message();
  EXPECT_EQ(cache.stats().entries, 2u);
}

TEST(SemanticCache, EntriesExpireAfterTheirTtl) {
  ManualClock clock;
  SemanticCacheOptions options = options_on(clock);
  options.ttl = std::chrono::hours(1);
  SemanticCache cache = memory_cache(options);
  ASSERT_TRUE(cache.insert("s", "what is the weather like", basis(kDim, 0), "Sunny."));
  clock.advance_ms(59 * 60 * 1000);
  EXPECT_EQ(served(cache, "s", "what is the weather like", basis(kDim, 0)), "Sunny.");  // a hit does not renew it
  clock.advance_ms(60 * 1000);
  EXPECT_EQ(served(cache, "s", "what is the weather like", basis(kDim, 0)), "");
  EXPECT_EQ(cache.stats().entries, 0u);  // removed as the lookup met it

  ASSERT_TRUE(cache.insert("s", "one", basis(kDim, 1), "1"));
  ASSERT_TRUE(cache.insert("t", "two", basis(kDim, 2), "2"));
  clock.advance_ms(30 * 60 * 1000);
  ASSERT_TRUE(cache.insert("s", "three", basis(kDim, 3), "3"));
  clock.advance_ms(31 * 60 * 1000);
  Result<std::int64_t> purged = cache.purge_expired();
  ASSERT_TRUE(purged) << purged.message();
  EXPECT_EQ(*purged, 2);
  EXPECT_EQ(cache.stats().entries, 1u);
}

TEST(SemanticCache, TheSamePromptAgainReplacesItsEntry) {
  ManualClock clock;
  SemanticCache cache = memory_cache(options_on(clock));
  ASSERT_TRUE(cache.insert("s", "tell me a joke", basis(kDim, 0), "old joke"));
  ASSERT_TRUE(cache.insert("s", "tell me a joke", basis(kDim, 0), "new joke"));
  EXPECT_EQ(cache.stats().entries, 1u);
  EXPECT_EQ(served(cache, "s", "tell me a joke", basis(kDim, 0)), "new joke");
}

TEST(SemanticCache, StatsCountLookupsAndHits) {
  ManualClock clock;
  SemanticCache cache = memory_cache(options_on(clock));
  ASSERT_TRUE(cache.insert("s", "hello", basis(kDim, 0), "hi"));
  served(cache, "s", "hello", basis(kDim, 0));
  served(cache, "s", "goodbye", basis(kDim, 1));
  served(cache, "unknown scope", "hello", basis(kDim, 0));
  const CacheStats stats = cache.stats();
  EXPECT_EQ(stats.lookups, 3);
  EXPECT_EQ(stats.hits, 1);
  EXPECT_DOUBLE_EQ(stats.hit_rate(), 1.0 / 3.0);
  EXPECT_EQ(stats.entries, 1u);
}

TEST(SemanticCache, InvalidOptionsAreRefused) {
  SemanticCacheOptions options;
  options.threshold = 0.5f;
  EXPECT_FALSE(SemanticCache::in_memory(options));
  options.threshold = 0.97f;
  options.max_entries = 0;
  EXPECT_FALSE(SemanticCache::open_file(scratch_database("invalid"), options));
}

// The operations every cache offers, in memory and on a file alike.
class EveryBacking : public ::testing::TestWithParam<bool> {
 protected:
  SemanticCache make(const SemanticCacheOptions& options) {
    return GetParam() ? file_cache(scratch_database("backing"), options) : memory_cache(options);
  }
};

TEST_P(EveryBacking, ListSearchRemoveInvalidateClear) {
  ManualClock clock;
  SemanticCache cache = make(options_on(clock));
  Result<std::int64_t> paris = cache.insert("geo", "capital of France?", basis(kDim, 0), "Paris");
  clock.advance_ms(1);
  Result<std::int64_t> rome = cache.insert("geo", "capital of Italy?", basis(kDim, 1), "Rome");
  clock.advance_ms(1);
  Result<std::int64_t> joke = cache.insert("fun", "a joke please", basis(kDim, 2), "Knock knock");
  ASSERT_TRUE(paris && rome && joke);

  Result<std::vector<CachedEntry>> all = cache.list(std::nullopt, "");
  ASSERT_TRUE(all) << all.message();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].id, *joke);  // most recently used first
  Result<std::vector<CachedEntry>> geo = cache.list(std::string("geo"), "");
  ASSERT_TRUE(geo);
  EXPECT_EQ(geo->size(), 2u);
  Result<std::vector<CachedEntry>> found = cache.list(std::nullopt, "ROME");
  ASSERT_TRUE(found);
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ((*found)[0].prompt, "capital of Italy?");
  EXPECT_EQ((*found)[0].bytes, 17 + 4 + 32);

  ASSERT_TRUE(cache.remove(*rome));
  EXPECT_FALSE(cache.remove(*rome));
  EXPECT_EQ(served(cache, "geo", "capital of Italy?", basis(kDim, 1)), "");
  ASSERT_TRUE(cache.invalidate_scope("geo"));
  EXPECT_EQ(served(cache, "geo", "capital of France?", basis(kDim, 0)), "");
  EXPECT_EQ(served(cache, "fun", "a joke please", basis(kDim, 2)), "Knock knock");
  ASSERT_TRUE(cache.clear());
  EXPECT_EQ(cache.stats().entries, 0u);
  EXPECT_EQ(cache.stats().bytes, 0);
  EXPECT_EQ(served(cache, "fun", "a joke please", basis(kDim, 2)), "");
}

TEST_P(EveryBacking, SmallerLimitsEvictAtOnceANewTtlCountsForNewEntriesAndGoneIdsAreSkipped) {
  ManualClock clock;
  SemanticCache cache = make(options_on(clock));
  const char* prompts[] = {"first question", "second question", "third question"};
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(cache.insert("s", prompts[i], basis(kDim, i), prompts[i]));
    clock.advance_ms(1);
  }
  EXPECT_EQ(served(cache, "s", prompts[0], basis(kDim, 0)), prompts[0]);  // first is now the most recent

  ASSERT_TRUE(cache.set_retention(std::chrono::minutes(10), 2, std::int64_t{1} << 20));
  EXPECT_EQ(cache.stats().entries, 2u);
  EXPECT_EQ(served(cache, "s", prompts[1], basis(kDim, 1)), "");  // the least recently used went
  Result<std::vector<CachedEntry>> listed = cache.list(std::nullopt, "");
  ASSERT_TRUE(listed) << listed.message();
  EXPECT_EQ(listed->size(), 2u);

  ASSERT_TRUE(cache.insert("s", "fourth question", basis(kDim, 3), "4"));  // evicts third (LRU)
  clock.advance_ms(10 * 60 * 1000);
  EXPECT_EQ(served(cache, "s", "fourth question", basis(kDim, 3)), "");     // stored under the 10-minute TTL
  EXPECT_EQ(served(cache, "s", prompts[0], basis(kDim, 0)), prompts[0]);  // stored under the week-long one

  EXPECT_FALSE(cache.set_retention(std::chrono::minutes(0), 2, 1000));
  EXPECT_FALSE(cache.set_retention(std::chrono::minutes(1), 0, 1000));
  EXPECT_EQ(cache.options().max_entries, 2u);  // a refused change changes nothing

  listed = cache.list(std::nullopt, "");
  ASSERT_TRUE(listed) << listed.message();
  ASSERT_EQ(listed->size(), 1u);  // the fourth expired
  ASSERT_TRUE(cache.remove_present({listed->front().id, listed->front().id + 1000}));  // a missing id is skipped
  EXPECT_EQ(cache.stats().entries, 0u);
}

INSTANTIATE_TEST_SUITE_P(SemanticCache, EveryBacking, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "file" : "memory"; });

TEST(SemanticCache, EntriesHitsAndExpirySurviveARestart) {
  ManualClock clock;
  SemanticCacheOptions options = options_on(clock);
  options.ttl = std::chrono::hours(2);
  const std::string path = scratch_database("restart");
  std::int64_t id = 0;
  {
    SemanticCache cache = file_cache(path, options);
    Result<std::int64_t> added = cache.insert("s", "How do I exit vim?", basis(kDim, 0), ":q!");
    ASSERT_TRUE(added) << added.message();
    id = *added;
    ASSERT_TRUE(cache.insert("s", "How do I save in nano?", basis(kDim, 1), "Ctrl+O"));
    EXPECT_EQ(served(cache, "s", "How do I exit vim?", basis(kDim, 0)), ":q!");
  }
  clock.advance_ms(60 * 60 * 1000);
  {
    SemanticCache cache = file_cache(path, options);
    EXPECT_EQ(cache.stats().entries, 2u);
    EXPECT_EQ(served(cache, "s", "how do I exit vim", basis(kDim, 0)), ":q!");
    Result<std::vector<CachedEntry>> listed = cache.list(std::nullopt, "vim");
    ASSERT_TRUE(listed && listed->size() == 1u);
    EXPECT_EQ((*listed)[0].id, id);
    EXPECT_EQ((*listed)[0].hits, 2);
  }
  clock.advance_ms(61 * 60 * 1000);
  {
    SemanticCache cache = file_cache(path, options);
    EXPECT_EQ(served(cache, "s", "How do I exit vim?", basis(kDim, 0)), "");  // past its 2 hours
    EXPECT_EQ(cache.stats().entries, 1u);
  }
}

TEST(SemanticCache, LeastRecentlyUsedOrderSurvivesARestart) {
  ManualClock clock;
  SemanticCacheOptions options = options_on(clock);
  options.max_entries = 2;
  const std::string path = scratch_database("restart-lru");
  {
    SemanticCache cache = file_cache(path, options);
    ASSERT_TRUE(cache.insert("s", "first prompt", basis(kDim, 0), "1"));
    clock.advance_ms(10);
    ASSERT_TRUE(cache.insert("s", "second prompt", basis(kDim, 1), "2"));
    clock.advance_ms(10);
    EXPECT_EQ(served(cache, "s", "first prompt", basis(kDim, 0)), "1");  // second is now the LRU
  }
  clock.advance_ms(10);
  SemanticCache cache = file_cache(path, options);
  ASSERT_TRUE(cache.insert("s", "third prompt", basis(kDim, 2), "3"));
  EXPECT_EQ(served(cache, "s", "second prompt", basis(kDim, 1)), "");
  EXPECT_EQ(served(cache, "s", "first prompt", basis(kDim, 0)), "1");
  EXPECT_EQ(served(cache, "s", "third prompt", basis(kDim, 2)), "3");
}

}  // namespace
}  // namespace inferscope::semantic
