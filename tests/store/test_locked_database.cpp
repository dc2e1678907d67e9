// A database locked by another connection gives a clear "locked" error after the busy timeout:
// no hang, no crash, and nothing half-written.
#include <gtest/gtest.h>

#include <chrono>

#include "tests/store/store_test_support.h"

namespace inferscope::store {
namespace {

using testing::RawConnection;
using testing::scratch_file;
using testing::test_options;
using Clock = std::chrono::steady_clock;

constexpr auto kBusyTimeout = std::chrono::milliseconds(300);

void expect_locked_error_after_timeout(const Status& status, Clock::duration waited) {
  ASSERT_FALSE(status);
  EXPECT_EQ(store_error_kind(status), StoreErrorKind::locked) << status.message();
  EXPECT_NE(status.message().find("locked"), std::string::npos) << status.message();
  EXPECT_GE(waited, kBusyTimeout - std::chrono::milliseconds(50));
  EXPECT_LT(waited, kBusyTimeout + std::chrono::seconds(3));
}

TEST(LockedDatabase, WriteWhileAnotherConnectionHoldsTheWriteLock) {
  const std::string path = scratch_file("locked-write");
  Result<Store> store = Store::open(path, test_options(kBusyTimeout));
  ASSERT_TRUE(store) << store.message();
  Result<SessionRecord> session = store->sessions().create({"chat", "", ""});
  ASSERT_TRUE(session) << session.message();

  RawConnection other(path);
  ASSERT_EQ(other.exec("BEGIN EXCLUSIVE"), "");
  const Clock::time_point start = Clock::now();
  Result<MessageRecord> append = store->messages().append(session->id, {MessageRole::user, "blocked", {}});
  expect_locked_error_after_timeout(append.status(), Clock::now() - start);

  // Reading still works in WAL mode, and once the lock is gone writing does too.
  Result<std::vector<MessageRecord>> messages = store->messages().list(session->id);
  ASSERT_TRUE(messages) << messages.message();
  EXPECT_TRUE(messages->empty());
  ASSERT_EQ(other.exec("COMMIT"), "");
  EXPECT_TRUE(store->messages().append(session->id, {MessageRole::user, "unblocked", {}}));
}

TEST(LockedDatabase, OpenWhileAnotherProcessHoldsAnExclusiveLock) {
  // A rollback-journal database (another tool's, or one not yet opened by us) under an exclusive
  // lock cannot even be read.
  const std::string path = scratch_file("locked-open");
  RawConnection other(path);
  ASSERT_EQ(other.exec("CREATE TABLE t (x); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1);"), "");
  const Clock::time_point start = Clock::now();
  Result<Store> store = Store::open(path, test_options(kBusyTimeout));
  expect_locked_error_after_timeout(store.status(), Clock::now() - start);
  ASSERT_EQ(other.exec("ROLLBACK"), "");
}

TEST(LockedDatabase, MigrationWaitsForTheLockThenLeavesTheFileAsItWas) {
  const std::string path = scratch_file("locked-migration");
  RawConnection other(path);
  ASSERT_EQ(other.exec("PRAGMA journal_mode = WAL; BEGIN EXCLUSIVE;"), "");
  const Clock::time_point start = Clock::now();
  Result<Store> store = Store::open(path, test_options(kBusyTimeout));
  expect_locked_error_after_timeout(store.status(), Clock::now() - start);
  ASSERT_EQ(other.exec("COMMIT"), "");
  EXPECT_EQ(other.query_int("PRAGMA user_version"), 0);
  EXPECT_TRUE(Store::open(path, test_options(kBusyTimeout)));
}

}  // namespace
}  // namespace inferscope::store
