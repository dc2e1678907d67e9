// A damaged, locked or read-only database never crashes the cache or loses anything: the cache
// opens memory-only with a notice, or the one operation returns an error Status and memory stays
// as it was; once the lock is gone, work goes on.
#include <gtest/gtest.h>

#include "engine/semantic/semantic_cache.h"
#include "tests/semantic/semantic_test_support.h"
#include "tests/store/store_test_support.h"

namespace inferscope::semantic {
namespace {

using store::testing::file_bytes;
using store::testing::RawConnection;
using store::testing::write_file_bytes;
using testing::basis;

constexpr std::size_t kDim = 8;

std::string scratch_database(const std::string& test) {
  return (inferscope::testing::scratch_dir("semantic-" + test) / "cache.sqlite").string();
}

store::StoreOptions short_busy_timeout() {
  store::StoreOptions options;
  options.busy_timeout = std::chrono::milliseconds(200);
  return options;
}

TEST(SemanticCacheFailures, GarbageFileGivesAMemoryOnlyCacheAndStaysUntouched) {
  const std::string path = scratch_database("garbage");
  std::string garbage(8192, '\0');
  for (std::size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>((i * 131 + 7) % 251);
  write_file_bytes(path, garbage);

  Result<SemanticCache> cache = SemanticCache::open_file(path, {}, short_busy_timeout());
  ASSERT_TRUE(cache) << cache.message();
  EXPECT_FALSE(cache->is_persistent());
  EXPECT_NE(cache->notice().find("memory only"), std::string::npos) << cache->notice();
  EXPECT_NE(cache->notice().find(path), std::string::npos) << cache->notice();

  ASSERT_TRUE(cache->insert("s", "hello", basis(kDim, 0), "hi"));
  Result<CacheLookup> found = cache->lookup("s", "hello", basis(kDim, 0));
  ASSERT_TRUE(found && found->hit);
  EXPECT_EQ(file_bytes(path), garbage);
}

TEST(SemanticCacheFailures, ADamagedEntryFailsItsScopeOnlyWithAStatus) {
  const std::string path = scratch_database("damaged-entry");
  Result<SemanticCache> cache = SemanticCache::open_file(path);
  ASSERT_TRUE(cache && cache->is_persistent()) << cache->notice();
  ASSERT_TRUE(cache->insert("good", "hello", basis(kDim, 0), "hi"));
  {
    RawConnection raw(path);
    ASSERT_EQ(raw.exec("INSERT INTO semantic_cache (scope_key, prompt, embedding, response, created_at, "
                       "last_used_at, expires_at, bytes) VALUES ('bad', 'p', x'010203', 'r', 1, 1, 9e18, 9)"),
              "");
    ASSERT_EQ(raw.exec("INSERT INTO semantic_cache (scope_key, prompt, embedding, response, created_at, "
                       "last_used_at, expires_at, bytes) VALUES ('zero', 'p', zeroblob(32), 'r', 1, 1, 9e18, 9)"),
              "");
  }
  Result<CacheLookup> bad = cache->lookup("bad", "p", basis(kDim, 0));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("not a whole number of float32"), std::string::npos) << bad.message();
  Result<CacheLookup> zero = cache->lookup("zero", "p", basis(kDim, 0));
  ASSERT_FALSE(zero);
  EXPECT_NE(zero.message().find("all zeros"), std::string::npos) << zero.message();

  Result<CacheLookup> good = cache->lookup("good", "hello", basis(kDim, 0));
  ASSERT_TRUE(good && good->hit) << good.message();
  EXPECT_EQ(good->hit->reply, "hi");
}

TEST(SemanticCacheFailures, LockedDatabaseFailsWritesWithALockedStatusAndChangesNothing) {
  const std::string path = scratch_database("locked");
  Result<SemanticCache> cache = SemanticCache::open_file(path, {}, short_busy_timeout());
  ASSERT_TRUE(cache && cache->is_persistent()) << cache->notice();
  ASSERT_TRUE(cache->insert("s", "hello", basis(kDim, 0), "hi"));

  RawConnection other(path);
  ASSERT_EQ(other.exec("BEGIN EXCLUSIVE"), "");
  Result<std::int64_t> blocked = cache->insert("s", "goodbye", basis(kDim, 1), "bye");
  ASSERT_FALSE(blocked);
  EXPECT_EQ(store::store_error_kind(blocked.status()), store::StoreErrorKind::locked) << blocked.message();
  EXPECT_EQ(cache->stats().entries, 1u);
  Result<CacheLookup> hit_blocked = cache->lookup("s", "hello", basis(kDim, 0));  // recording the hit must write
  ASSERT_FALSE(hit_blocked);
  EXPECT_EQ(store::store_error_kind(hit_blocked.status()), store::StoreErrorKind::locked);
  Result<CacheLookup> miss = cache->lookup("s", "goodbye", basis(kDim, 1));  // a miss only reads
  ASSERT_TRUE(miss) << miss.message();
  EXPECT_FALSE(miss->hit);
  EXPECT_FALSE(cache->clear());
  EXPECT_EQ(cache->stats().entries, 1u);

  ASSERT_EQ(other.exec("COMMIT"), "");
  ASSERT_TRUE(cache->insert("s", "goodbye", basis(kDim, 1), "bye"));
  Result<CacheLookup> hit = cache->lookup("s", "hello", basis(kDim, 0));
  ASSERT_TRUE(hit && hit->hit) << hit.message();
  EXPECT_EQ(other.query_int("SELECT count(*) FROM semantic_cache"), 2);
  EXPECT_EQ(other.query_int("SELECT hits FROM semantic_cache WHERE prompt = 'hello'"), 1);
}

TEST(SemanticCacheFailures, DatabaseLockedAtOpenGivesAMemoryOnlyCache) {
  // A rollback-journal database (not yet opened by Inferscope) under an exclusive lock cannot
  // even be read.
  const std::string path = scratch_database("locked-open");
  RawConnection other(path);
  ASSERT_EQ(other.exec("CREATE TABLE t (x); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1);"), "");
  Result<SemanticCache> cache = SemanticCache::open_file(path, {}, short_busy_timeout());
  ASSERT_TRUE(cache) << cache.message();
  EXPECT_FALSE(cache->is_persistent());
  EXPECT_NE(cache->notice().find("locked"), std::string::npos) << cache->notice();
  ASSERT_TRUE(cache->insert("s", "hello", basis(kDim, 0), "hi"));
  ASSERT_EQ(other.exec("ROLLBACK"), "");
  EXPECT_EQ(other.query_int("SELECT count(*) FROM t"), 0);
}

TEST(SemanticCacheFailures, ReadOnlyStoreIsRefused) {
  const std::string path = scratch_database("read-only");
  ASSERT_TRUE(store::Store::open(path));
  Result<store::Store> read_only = store::Store::open_read_only(path);
  ASSERT_TRUE(read_only) << read_only.message();
  Result<SemanticCache> cache = SemanticCache::with_store(*read_only);
  ASSERT_FALSE(cache);
  EXPECT_NE(cache.message().find("read-only"), std::string::npos) << cache.message();
}

}  // namespace
}  // namespace inferscope::semantic
