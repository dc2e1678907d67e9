// Semantic-cache storage: entries round trip (embedding floats bit-exact), lookup is by scope.
#include <gtest/gtest.h>

#include <limits>

#include "tests/store/store_test_support.h"

namespace inferscope::store {
namespace {

using testing::scratch_file;
using testing::test_options;

TEST(SemanticCache, InsertAndFindByScope) {
  Result<Store> store = Store::open(scratch_file("semantic-cache"), test_options());
  ASSERT_TRUE(store) << store.message();
  SemanticCacheRepo cache = store->semantic_cache();
  const std::vector<float> embedding = {0.25f, -1.5f, 3.0e-8f, std::numeric_limits<float>::max()};
  Result<CacheEntry> added = cache.insert({"sha:abc|sys:be brief|t=0", "capital of France?", embedding, "Paris."});
  ASSERT_TRUE(added) << added.message();
  ASSERT_TRUE(cache.insert({"sha:abc|sys:be brief|t=0", "2+2?", {}, "4"}));
  ASSERT_TRUE(cache.insert({"sha:other|sys:|t=0.8", "capital of France?", embedding, "Paris!"}));

  Result<std::vector<CacheEntry>> entries = cache.find_by_scope("sha:abc|sys:be brief|t=0");
  ASSERT_TRUE(entries) << entries.message();
  ASSERT_EQ(entries->size(), 2u);
  const CacheEntry& first = (*entries)[0];
  EXPECT_EQ(first.id, added->id);
  EXPECT_EQ(first.prompt, "capital of France?");
  EXPECT_EQ(first.embedding, embedding);
  EXPECT_EQ(first.response, "Paris.");
  EXPECT_EQ(first.hits, 0);
  EXPECT_EQ(first.created_at, first.last_used_at);
  EXPECT_TRUE((*entries)[1].embedding.empty());

  Result<std::vector<CacheEntry>> none = cache.find_by_scope("sha:unknown");
  ASSERT_TRUE(none) << none.message();
  EXPECT_TRUE(none->empty());
}

// An entry without an embedding reads back as an empty one (tests/sanitize.sh runs this under
// UndefinedBehaviorSanitizer, which caught a memcpy from the empty blob's null pointer).
TEST(SemanticCache, EmptyEmbeddingReadsBackEmpty) {
  Result<Store> store = Store::open(scratch_file("semantic-cache-empty"), test_options());
  ASSERT_TRUE(store) << store.message();
  SemanticCacheRepo cache = store->semantic_cache();
  ASSERT_TRUE(cache.insert({"scope", "no vector", {}, "reply"}));
  Result<std::vector<CacheEntry>> entries = cache.find_by_scope("scope");
  ASSERT_TRUE(entries) << entries.message();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_TRUE((*entries)[0].embedding.empty());
  EXPECT_EQ((*entries)[0].response, "reply");
}

TEST(SemanticCache, MalformedEmbeddingIsAnErrorNotACrash) {
  const std::string path = scratch_file("semantic-cache-bad-blob");
  ASSERT_TRUE(Store::open(path, test_options()));
  {
    testing::RawConnection raw(path);
    ASSERT_EQ(raw.exec("INSERT INTO semantic_cache (scope_key, prompt, embedding, response, created_at, last_used_at)"
                       " VALUES ('s', 'p', x'010203', 'r', 1, 1)"),
              "");
  }
  Result<Store> store = Store::open(path, test_options());
  ASSERT_TRUE(store) << store.message();
  Result<std::vector<CacheEntry>> entries = store->semantic_cache().find_by_scope("s");
  ASSERT_FALSE(entries);
  EXPECT_NE(entries.message().find("not a whole number of float32"), std::string::npos) << entries.message();
}

}  // namespace
}  // namespace inferscope::store
