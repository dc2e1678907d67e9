// Opening: a new file gets the current schema with the store's pragmas; reopening keeps data;
// a newer schema or open_read_only gives a read-only store that refuses writes.
#include <gtest/gtest.h>

#include "engine/store/schema.h"
#include "tests/store/store_test_support.h"

namespace inferscope::store {
namespace {

using testing::file_bytes;
using testing::RawConnection;
using testing::scratch_file;
using testing::test_options;

TEST(StoreOpen, CreatesCurrentSchemaInWalMode) {
  const std::string path = scratch_file("create");
  {
    Result<Store> store = Store::open(path, test_options());
    ASSERT_TRUE(store) << store.message();
    EXPECT_FALSE(store->is_read_only());
    EXPECT_EQ(store->notice(), "");
    EXPECT_TRUE(store->check_integrity()) << store->check_integrity().message();
  }
  RawConnection raw(path);
  EXPECT_EQ(raw.query_int("PRAGMA user_version"), current_schema_version());
  EXPECT_EQ(raw.query_int("SELECT count(*) FROM pragma_journal_mode WHERE journal_mode = 'wal'"), 1);
}

TEST(StoreOpen, MessagesNeedAnExistingSession) {
  Result<Store> store = Store::open(scratch_file("foreign-keys"), test_options());
  ASSERT_TRUE(store) << store.message();
  Result<MessageRecord> orphan = store->messages().append(12345, {MessageRole::user, "hello", {}});
  ASSERT_FALSE(orphan);
  EXPECT_NE(orphan.message().find("no session with id 12345"), std::string::npos) << orphan.message();
}

TEST(StoreOpen, ReopeningKeepsData) {
  const std::string path = scratch_file("reopen");
  {
    Result<Store> store = Store::open(path, test_options());
    ASSERT_TRUE(store) << store.message();
    ASSERT_TRUE(store->sessions().create({"kept", "", ""}));
  }
  Result<Store> store = Store::open(path, test_options());
  ASSERT_TRUE(store) << store.message();
  Result<std::vector<SessionRecord>> sessions = store->sessions().list();
  ASSERT_TRUE(sessions) << sessions.message();
  ASSERT_EQ(sessions->size(), 1u);
  EXPECT_EQ(sessions->front().title, "kept");
}

TEST(StoreOpen, ReposStayValidWhenTheStoreMoves) {
  Result<Store> opened = Store::open(scratch_file("move"), test_options());
  ASSERT_TRUE(opened) << opened.message();
  Store store = std::move(*opened);
  Result<SessionRecord> session = store.sessions().create({"moved", "", ""});
  ASSERT_TRUE(session) << session.message();
  EXPECT_EQ(session->title, "moved");
}

TEST(StoreOpen, NewerSchemaOpensReadOnlyAndIsNeverModified) {
  const std::string path = scratch_file("newer");
  {
    Result<Store> store = Store::open(path, test_options());
    ASSERT_TRUE(store) << store.message();
    ASSERT_TRUE(store->sessions().create({"from the future", "", ""}));
  }
  const int future_version = current_schema_version() + 5;
  {
    RawConnection raw(path);
    ASSERT_EQ(raw.exec("PRAGMA user_version = " + std::to_string(future_version)), "");
    ASSERT_EQ(raw.exec("PRAGMA journal_mode = DELETE"), "");  // one file to compare, no WAL beside it
  }
  const std::string before = file_bytes(path);

  Result<Store> store = Store::open(path, test_options());
  ASSERT_TRUE(store) << store.message();
  EXPECT_TRUE(store->is_read_only());
  EXPECT_NE(store->notice().find("newer Inferscope"), std::string::npos) << store->notice();
  EXPECT_NE(store->notice().find(std::to_string(future_version)), std::string::npos) << store->notice();
  EXPECT_NE(store->notice().find("read-only"), std::string::npos) << store->notice();

  Result<std::vector<SessionRecord>> sessions = store->sessions().list();
  ASSERT_TRUE(sessions) << sessions.message();
  ASSERT_EQ(sessions->size(), 1u);
  EXPECT_EQ(sessions->front().title, "from the future");

  Status rename = store->sessions().rename(sessions->front().id, "changed");
  ASSERT_FALSE(rename);
  EXPECT_NE(rename.message().find("readonly"), std::string::npos) << rename.message();
  EXPECT_FALSE(store->presets().save("p", "{}"));
  EXPECT_EQ(file_bytes(path), before);
}

TEST(StoreOpen, ReadOnlyFallbackReadsButRefusesWrites) {
  const std::string path = scratch_file("read-only");
  {
    Result<Store> store = Store::open(path, test_options());
    ASSERT_TRUE(store) << store.message();
    ASSERT_TRUE(store->presets().save("greedy", R"({"temperature": 0})"));
  }
  Result<Store> store = Store::open_read_only(path, test_options());
  ASSERT_TRUE(store) << store.message();
  EXPECT_TRUE(store->is_read_only());
  EXPECT_NE(store->notice().find("read-only"), std::string::npos);
  Result<Preset> preset = store->presets().load("greedy");
  ASSERT_TRUE(preset) << preset.message();
  EXPECT_EQ(preset->settings_json, R"({"temperature": 0})");
  EXPECT_FALSE(store->sessions().create({"nope", "", ""}));
}

TEST(StoreOpen, MissingFolderIsAClearError) {
  const std::string path = scratch_file("missing-folder") + "/no/such/dir/db.sqlite";
  Result<Store> store = Store::open(path, test_options());
  ASSERT_FALSE(store);
  EXPECT_NE(store.message().find(path), std::string::npos) << store.message();
}

}  // namespace
}  // namespace inferscope::store
