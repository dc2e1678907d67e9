#include "engine/store/schema.h"

namespace inferscope::store {
namespace {

// Times are Unix milliseconds (INTEGER). JSON columns are checked with json_valid().
constexpr const char* kVersion1Chats = R"sql(
CREATE TABLE sessions (
  id            INTEGER PRIMARY KEY,
  title         TEXT    NOT NULL,
  system_prompt TEXT    NOT NULL DEFAULT '',
  model_path    TEXT    NOT NULL DEFAULT '',
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  deleted_at    INTEGER
);
CREATE INDEX sessions_by_update ON sessions (updated_at DESC, id DESC) WHERE deleted_at IS NULL;

CREATE TABLE messages (
  id                INTEGER PRIMARY KEY,
  session_id        INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  role              TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
  content           TEXT    NOT NULL,
  created_at        INTEGER NOT NULL,
  tokens            INTEGER,
  tokens_per_second REAL,
  ttft_ms           REAL,
  stop_reason       TEXT,
  model             TEXT,
  backend           TEXT
);
CREATE INDEX messages_by_session ON messages (session_id, id);

CREATE TABLE presets (
  name          TEXT    PRIMARY KEY,
  settings_json TEXT    NOT NULL CHECK (json_valid(settings_json)),
  updated_at    INTEGER NOT NULL
);

CREATE TABLE benchmark_runs (
  id           INTEGER PRIMARY KEY,
  model        TEXT    NOT NULL,
  backend      TEXT    NOT NULL,
  config_json  TEXT    NOT NULL CHECK (json_valid(config_json)),
  metrics_json TEXT    NOT NULL CHECK (json_valid(metrics_json)),
  created_at   INTEGER NOT NULL
);
)sql";

// Full-text index over message content (FTS5, external content: the text lives once, in
// messages; triggers keep the index in step). 'rebuild' indexes the messages already there.
constexpr const char* kVersion2MessageSearch = R"sql(
CREATE VIRTUAL TABLE message_search USING fts5 (
  content, content = 'messages', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER messages_search_insert AFTER INSERT ON messages BEGIN
  INSERT INTO message_search (rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_search_delete AFTER DELETE ON messages BEGIN
  INSERT INTO message_search (message_search, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_search_update AFTER UPDATE OF content ON messages BEGIN
  INSERT INTO message_search (message_search, rowid, content) VALUES ('delete', old.id, old.content);
  INSERT INTO message_search (rowid, content) VALUES (new.id, new.content);
END;
INSERT INTO message_search (message_search) VALUES ('rebuild');
)sql";

// Semantic cache entries; scope_key = model hash + system prompt + sampling settings, so a
// lookup only ever sees answers produced under the same conditions. embedding: float32 array.
constexpr const char* kVersion3SemanticCache = R"sql(
CREATE TABLE semantic_cache (
  id           INTEGER PRIMARY KEY,
  scope_key    TEXT    NOT NULL,
  prompt       TEXT    NOT NULL,
  embedding    BLOB    NOT NULL,
  response     TEXT    NOT NULL,
  hits         INTEGER NOT NULL DEFAULT 0,
  created_at   INTEGER NOT NULL,
  last_used_at INTEGER NOT NULL
);
CREATE INDEX semantic_cache_by_scope ON semantic_cache (scope_key);
)sql";

// Comparison runs (the workbench) share benchmark_runs with bench's runs; kind tells them apart.
constexpr const char* kVersion4RunKinds = R"sql(
ALTER TABLE benchmark_runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'bench' CHECK (kind IN ('bench', 'compare'));
CREATE INDEX benchmark_runs_by_kind ON benchmark_runs (kind, created_at DESC, id DESC);
)sql";

// The semantic cache's policy (engine/semantic): bytes (UTF-8 prompt + response + embedding BLOB)
// for the byte limit, expires_at (Unix ms) for freshness. Entries written before this version
// get the default freshness of 7 days from their creation.
constexpr const char* kVersion5SemanticCachePolicy = R"sql(
ALTER TABLE semantic_cache ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE semantic_cache ADD COLUMN expires_at INTEGER NOT NULL DEFAULT 0;
UPDATE semantic_cache SET
  bytes = length(CAST(prompt AS BLOB)) + length(CAST(response AS BLOB)) + length(embedding),
  expires_at = created_at + 604800000;
CREATE INDEX semantic_cache_by_expiry ON semantic_cache (expires_at);
)sql";

// A thinking model's reasoning kept with its reply (shown collapsed when the chat is reopened).
constexpr const char* kVersion6Reasoning = R"sql(
ALTER TABLE messages ADD COLUMN reasoning TEXT;
ALTER TABLE messages ADD COLUMN reasoning_tokens INTEGER;
)sql";

constexpr Migration kMigrations[] = {
    {1, "sessions, messages, presets, benchmark runs", kVersion1Chats},
    {2, "full-text search over messages", kVersion2MessageSearch},
    {3, "semantic cache", kVersion3SemanticCache},
    {4, "kinds of benchmark runs (bench, compare)", kVersion4RunKinds},
    {5, "semantic cache sizes and expiry", kVersion5SemanticCachePolicy},
    {6, "reasoning of replies", kVersion6Reasoning},
};

}  // namespace

std::span<const Migration> migrations() { return kMigrations; }

int current_schema_version() { return kMigrations[std::size(kMigrations) - 1].version; }

}  // namespace inferscope::store
