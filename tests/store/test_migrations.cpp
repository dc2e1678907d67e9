// Migrations: the list is ordered 1..N; a database written at schema version 1 (made here with
// raw SQL, as that build wrote it) opens with its data kept, searchable, and the schema current.
#include <gtest/gtest.h>

#include "engine/store/schema.h"
#include "tests/store/store_test_support.h"

namespace inferscope::store {
namespace {

using testing::RawConnection;
using testing::scratch_file;
using testing::test_options;

// Schema version 1 as a build of that version created it.
constexpr const char* kSchemaVersion1 = R"sql(
PRAGMA journal_mode = WAL;
CREATE TABLE sessions (
  id INTEGER PRIMARY KEY, title TEXT NOT NULL, system_prompt TEXT NOT NULL DEFAULT '',
  model_path TEXT NOT NULL DEFAULT '', created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, deleted_at INTEGER);
CREATE INDEX sessions_by_update ON sessions (updated_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE TABLE messages (
  id INTEGER PRIMARY KEY, session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')), content TEXT NOT NULL,
  created_at INTEGER NOT NULL, tokens INTEGER, tokens_per_second REAL, ttft_ms REAL, stop_reason TEXT,
  model TEXT, backend TEXT);
CREATE INDEX messages_by_session ON messages (session_id, id);
CREATE TABLE presets (
  name TEXT PRIMARY KEY, settings_json TEXT NOT NULL CHECK (json_valid(settings_json)), updated_at INTEGER NOT NULL);
CREATE TABLE benchmark_runs (
  id INTEGER PRIMARY KEY, model TEXT NOT NULL, backend TEXT NOT NULL,
  config_json TEXT NOT NULL CHECK (json_valid(config_json)),
  metrics_json TEXT NOT NULL CHECK (json_valid(metrics_json)), created_at INTEGER NOT NULL);
PRAGMA user_version = 1;
)sql";

constexpr const char* kVersion1Data = R"sql(
INSERT INTO sessions (id, title, created_at, updated_at) VALUES (1, 'old chat', 100, 200);
INSERT INTO sessions (id, title, created_at, updated_at, deleted_at) VALUES (2, 'binned', 100, 150, 160);
INSERT INTO messages (session_id, role, content, created_at) VALUES (1, 'user', 'Explain photosynthesis', 110);
INSERT INTO messages (session_id, role, content, created_at, tokens, tokens_per_second, stop_reason)
  VALUES (1, 'assistant', 'Plants turn light into sugar.', 120, 7, 25.5, 'eos');
INSERT INTO messages (session_id, role, content, created_at) VALUES (2, 'user', 'photosynthesis again', 130);
INSERT INTO presets (name, settings_json, updated_at) VALUES ('old preset', '{"temperature": 0.7}', 90);
INSERT INTO benchmark_runs (model, backend, config_json, metrics_json, created_at)
  VALUES ('m.gguf', 'cpu', '{}', '{"tok_s": 10}', 80);
)sql";

TEST(Migrations, AreNumberedOneToCurrentInOrder) {
  int expected = 1;
  for (const Migration& migration : migrations()) EXPECT_EQ(migration.version, expected++);
  EXPECT_EQ(current_schema_version(), expected - 1);
}

TEST(Migrations, VersionOneDatabaseKeepsItsDataAndBecomesCurrent) {
  const std::string path = scratch_file("from-v1");
  {
    RawConnection raw(path);
    ASSERT_EQ(raw.exec(kSchemaVersion1), "");
    ASSERT_EQ(raw.exec(kVersion1Data), "");
  }
  {
    Result<Store> store = Store::open(path, test_options());
    ASSERT_TRUE(store) << store.message();
    EXPECT_FALSE(store->is_read_only());
    EXPECT_TRUE(store->check_integrity()) << store->check_integrity().message();

    Result<std::vector<SessionRecord>> sessions = store->sessions().list();
    ASSERT_TRUE(sessions) << sessions.message();
    ASSERT_EQ(sessions->size(), 1u);
    EXPECT_EQ(sessions->front().title, "old chat");
    Result<std::vector<MessageRecord>> messages = store->messages().list(1);
    ASSERT_TRUE(messages) << messages.message();
    ASSERT_EQ(messages->size(), 2u);
    EXPECT_EQ((*messages)[1].content, "Plants turn light into sugar.");
    EXPECT_EQ((*messages)[1].stats.tokens, 7);
    EXPECT_EQ((*messages)[1].stats.stop_reason, "eos");
    Result<Preset> preset = store->presets().load("old preset");
    ASSERT_TRUE(preset) << preset.message();
    Result<std::vector<BenchmarkRun>> runs = store->benchmark_runs().list();
    ASSERT_TRUE(runs) << runs.message();
    EXPECT_EQ(runs->size(), 1u);

    // Messages written before the search index existed are indexed by the migration.
    Result<std::vector<std::int64_t>> found = store->search().find("photosynthesis");
    ASSERT_TRUE(found) << found.message();
    EXPECT_EQ(*found, std::vector<std::int64_t>{1});
    ASSERT_TRUE(store->sessions().undo_delete(2));
    found = store->search().find("photosynthesis");
    ASSERT_TRUE(found) << found.message();
    EXPECT_EQ(*found, (std::vector<std::int64_t>{1, 2}));

    EXPECT_TRUE(store->semantic_cache().insert({"scope", "p", {1.0f}, "r"}));
  }
  RawConnection raw(path);
  EXPECT_EQ(raw.query_int("PRAGMA user_version"), current_schema_version());
}

TEST(Migrations, FailedMigrationLeavesTheDatabaseAtItsVersion) {
  const std::string path = scratch_file("failed-migration");
  {
    RawConnection raw(path);
    ASSERT_EQ(raw.exec(kSchemaVersion1), "");
    ASSERT_EQ(raw.exec(kVersion1Data), "");
    // A trigger already named like one of migration 2's makes it fail halfway through its script.
    ASSERT_EQ(raw.exec("CREATE TRIGGER messages_search_insert "
                       "AFTER INSERT ON presets BEGIN SELECT 1; END;"),
              "");
  }
  Result<Store> store = Store::open(path, test_options());
  ASSERT_FALSE(store);
  EXPECT_NE(store.message().find("migrating to schema version 2"), std::string::npos) << store.message();
  RawConnection raw(path);
  EXPECT_EQ(raw.query_int("PRAGMA user_version"), 1);
  EXPECT_EQ(raw.query_int("SELECT count(*) FROM sqlite_schema WHERE name = 'message_search'"), 0);
  EXPECT_EQ(raw.query_int("SELECT count(*) FROM messages"), 3);
}

}  // namespace
}  // namespace inferscope::store
