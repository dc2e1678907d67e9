// The store side of the semantic cache (engine/store/semantic_cache_repo.h): bookkeeping reads,
// hits, listing, the removals, and migration 5 on a version-4 file.
#include <gtest/gtest.h>

#include "engine/store/schema.h"
#include "tests/store/store_test_support.h"

namespace inferscope::store {
namespace {

using testing::RawConnection;
using testing::scratch_file;
using testing::test_options;

NewCacheEntry entry(const std::string& scope, const std::string& prompt, std::int64_t expires_at = kNeverExpires) {
  return NewCacheEntry{scope, prompt, {1.0f, 0.0f}, "reply to " + prompt, expires_at};
}

TEST(SemanticCacheRepo, InsertComputesBytesAndTotalsAddUp) {
  Result<Store> store = Store::open(scratch_file("cache-bytes"), test_options());
  ASSERT_TRUE(store) << store.message();
  SemanticCacheRepo repo = store->semantic_cache();
  Result<CacheEntry> added = repo.insert(entry("s", "héllo"));
  ASSERT_TRUE(added) << added.message();
  EXPECT_EQ(added->bytes, 6 + 15 + 8);  // UTF-8 bytes of prompt and response, two floats
  EXPECT_EQ(added->bytes, cache_entry_bytes("héllo", "reply to héllo", 2));
  ASSERT_TRUE(repo.insert(entry("s", "x")));
  Result<CacheTotals> totals = repo.totals();
  ASSERT_TRUE(totals) << totals.message();
  EXPECT_EQ(totals->entries, 2);
  EXPECT_EQ(totals->bytes, 29 + 1 + 10 + 8);
}

TEST(SemanticCacheRepo, InsertWithEvictionsIsOneTransaction) {
  const std::string path = scratch_file("cache-evict");
  Result<Store> store = Store::open(path, test_options());
  ASSERT_TRUE(store) << store.message();
  SemanticCacheRepo repo = store->semantic_cache();
  Result<CacheEntry> old = repo.insert(entry("s", "old"));
  ASSERT_TRUE(old);
  const std::int64_t evicted[] = {old->id};
  Result<CacheEntry> fresh = repo.insert(entry("s", "new"), evicted);
  ASSERT_TRUE(fresh) << fresh.message();
  Result<std::vector<CacheEntry>> left = repo.find_by_scope("s");
  ASSERT_TRUE(left && left->size() == 1u);
  EXPECT_EQ((*left)[0].prompt, "new");

  // A failed insert (the table made read-only by a trigger) leaves the eviction undone too.
  RawConnection raw(path);
  ASSERT_EQ(raw.exec("CREATE TRIGGER no_inserts BEFORE INSERT ON semantic_cache BEGIN SELECT RAISE(ABORT, 'no'); END"), "");
  const std::int64_t evict_fresh[] = {fresh->id};
  EXPECT_FALSE(repo.insert(entry("s", "newer"), evict_fresh));
  EXPECT_EQ(repo.find_by_scope("s")->size(), 1u);
}

TEST(SemanticCacheRepo, TouchUsageListAndRemovals) {
  Result<Store> store = Store::open(scratch_file("cache-ops"), test_options());
  ASSERT_TRUE(store) << store.message();
  SemanticCacheRepo repo = store->semantic_cache();
  Result<CacheEntry> a = repo.insert(entry("geo", "Capital of France", 100));
  Result<CacheEntry> b = repo.insert(entry("geo", "capital of Italy", 200));
  Result<CacheEntry> c = repo.insert(entry("fun", "a joke"));
  ASSERT_TRUE(a && b && c);

  Result<bool> touched = repo.touch(a->id, 2'000'000'000'000);
  ASSERT_TRUE(touched && *touched);
  Result<bool> missing = repo.touch(9999, 1);
  ASSERT_TRUE(missing);
  EXPECT_FALSE(*missing);

  Result<std::vector<CacheEntryUsage>> usage = repo.usage();
  ASSERT_TRUE(usage && usage->size() == 3u) << usage.message();
  EXPECT_EQ(usage->back().id, a->id);  // least recently used first: a was just used
  EXPECT_EQ(usage->back().hits, 1);
  EXPECT_EQ(usage->back().last_used_at, 2'000'000'000'000);

  Result<std::vector<CacheEntry>> capitals = repo.list({std::nullopt, "CAPITAL", std::nullopt, 10});
  ASSERT_TRUE(capitals) << capitals.message();
  ASSERT_EQ(capitals->size(), 2u);
  EXPECT_EQ((*capitals)[0].id, a->id);  // most recently used first
  EXPECT_EQ(repo.list({std::string("fun"), "", std::nullopt, 10})->size(), 1u);
  EXPECT_EQ(repo.list({std::nullopt, "", std::int64_t{150}, 10})->size(), 2u);  // a expired at 100
  EXPECT_EQ(repo.list({std::nullopt, "", std::nullopt, 1})->size(), 1u);

  Result<std::int64_t> expired = repo.remove_expired(150);
  ASSERT_TRUE(expired && *expired == 1);
  Result<std::int64_t> scope = repo.remove_scope("geo");
  ASSERT_TRUE(scope && *scope == 1);
  const std::int64_t ids[] = {c->id, 12345};
  ASSERT_TRUE(repo.remove(ids));
  EXPECT_EQ(repo.totals()->entries, 0);
  ASSERT_TRUE(repo.insert(entry("x", "y")));
  ASSERT_TRUE(repo.clear());
  EXPECT_EQ(repo.totals()->entries, 0);
}

TEST(SemanticCacheRepo, Migration5SizesAndDatesEntriesOfAVersion4File) {
  const std::string path = scratch_file("cache-migration");
  {
    RawConnection raw(path);
    for (const Migration& m : migrations()) {
      if (m.version <= 4) {
        ASSERT_EQ(raw.exec(m.sql), "") << m.summary;
      }
    }
    ASSERT_EQ(raw.exec("PRAGMA user_version = 4"), "");
    ASSERT_EQ(raw.exec("INSERT INTO semantic_cache (scope_key, prompt, embedding, response, created_at, last_used_at)"
                       " VALUES ('s', 'héllo', x'0000803F00000000', 'hi', 1000, 2000)"),
              "");
  }
  Result<Store> store = Store::open(path, test_options());
  ASSERT_TRUE(store) << store.message();
  Result<std::vector<CacheEntry>> entries = store->semantic_cache().find_by_scope("s");
  ASSERT_TRUE(entries && entries->size() == 1u) << entries.message();
  EXPECT_EQ((*entries)[0].bytes, 6 + 2 + 8);
  EXPECT_EQ((*entries)[0].expires_at, 1000 + 7 * 24 * 3600 * 1000LL);
  EXPECT_EQ((*entries)[0].embedding, (std::vector<float>{1.0f, 0.0f}));
}

}  // namespace
}  // namespace inferscope::store
