// Damaged files (garbage, truncated, overwritten pages) are reported at open as "damaged"; a
// fresh database is then started beside them and the damaged file keeps every byte.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/store/store_test_support.h"

namespace inferscope::store {
namespace {

using testing::file_bytes;
using testing::scratch_file;
using testing::test_options;
using testing::write_file_bytes;

// A database of a few hundred pages, checkpointed into the main file (no WAL left beside it).
std::string write_healthy_database(const std::string& path) {
  {
    Result<Store> store = Store::open(path, test_options());
    EXPECT_TRUE(store) << store.message();
    EXPECT_TRUE(store->sessions().create({"chat", "", ""}));
  }
  {
    testing::RawConnection raw(path);
    EXPECT_EQ(raw.exec("WITH RECURSIVE n (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 299) "
                       "INSERT INTO messages (session_id, role, content, created_at) "
                       "SELECT 1, 'user', 'message ' || i || ' ' || printf('%.1000c', char(97 + i % 26)), i FROM n"),
              "");
  }
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  return file_bytes(path);
}

void expect_damaged_at_open(const std::string& path) {
  Result<Store> store = Store::open(path, test_options());
  ASSERT_FALSE(store) << "a damaged database opened";
  EXPECT_EQ(store_error_kind(store.status()), StoreErrorKind::damaged) << store.message();
  EXPECT_NE(store.message().find(path), std::string::npos) << store.message();
}

TEST(DamagedDatabase, GarbageFileIsReportedAndKept) {
  const std::string path = scratch_file("garbage");
  std::string garbage(64 * 1024, '\0');
  for (std::size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>((i * 2654435761u) >> 13);
  write_file_bytes(path, garbage);
  expect_damaged_at_open(path);
  EXPECT_EQ(file_bytes(path), garbage);
}

TEST(DamagedDatabase, TruncatedFileIsReported) {
  const std::string path = scratch_file("truncated");
  const std::string healthy = write_healthy_database(path);
  const std::string truncated = healthy.substr(0, healthy.size() / 2 + 100);
  write_file_bytes(path, truncated);
  expect_damaged_at_open(path);
  EXPECT_EQ(file_bytes(path), truncated);
}

TEST(DamagedDatabase, OverwrittenPagesAreReported) {
  const std::string path = scratch_file("overwritten");
  std::string bytes = write_healthy_database(path);
  const std::size_t page = 4096;
  for (std::size_t i = 3 * page; i < 40 * page && i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + 1);
  write_file_bytes(path, bytes);
  expect_damaged_at_open(path);
  EXPECT_EQ(file_bytes(path), bytes);
}

TEST(DamagedDatabase, FreshDatabaseBesideLeavesTheDamagedFileUntouched) {
  const std::string path = scratch_file("fresh-beside", "chats.sqlite");
  const std::string garbage(10000, 'Z');
  write_file_bytes(path, garbage);
  ASSERT_FALSE(Store::open(path, test_options()));

  Result<Store> fresh = Store::open_fresh_beside(path, test_options());
  ASSERT_TRUE(fresh) << fresh.message();
  const std::filesystem::path fresh_path(fresh->path());
  EXPECT_EQ(fresh_path.parent_path(), std::filesystem::path(path).parent_path());
  EXPECT_EQ(fresh_path.filename().string().rfind("chats.recovered-", 0), 0u) << fresh_path;
  EXPECT_EQ(fresh_path.extension(), ".sqlite");
  EXPECT_NE(fresh->notice().find(fresh->path()), std::string::npos) << fresh->notice();
  EXPECT_NE(fresh->notice().find(path), std::string::npos) << fresh->notice();
  Result<SessionRecord> session = fresh->sessions().create({"new start", "", ""});
  ASSERT_TRUE(session) << session.message();
  EXPECT_TRUE(fresh->messages().append(session->id, {MessageRole::user, "hello", {}}));

  // A second recovery in the same second gets its own file.
  Result<Store> second = Store::open_fresh_beside(path, test_options());
  ASSERT_TRUE(second) << second.message();
  EXPECT_NE(second->path(), fresh->path());
  Result<std::vector<SessionRecord>> sessions = second->sessions().list();
  ASSERT_TRUE(sessions) << sessions.message();
  EXPECT_TRUE(sessions->empty());

  EXPECT_EQ(file_bytes(path), garbage);
}

TEST(DamagedDatabase, ReadOnlyOpenOfGarbageIsAnErrorNotACrash) {
  const std::string path = scratch_file("garbage-read-only");
  write_file_bytes(path, std::string(5000, '\x7f'));
  Result<Store> store = Store::open_read_only(path, test_options());
  ASSERT_FALSE(store);
  EXPECT_EQ(store_error_kind(store.status()), StoreErrorKind::damaged) << store.message();
}

}  // namespace
}  // namespace inferscope::store
