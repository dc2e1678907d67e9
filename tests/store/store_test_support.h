// Helpers shared by the store tests: a deterministic clock, raw SQLite access for fixtures the
// store itself would never write, and file bytes for "untouched" checks.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "engine/store/store.h"
#include "tests/support/scratch_dir.h"

namespace inferscope::store::testing {

// Every call to now_ms() is 1 ms after the previous one, so "newest first" never ties.
inline StoreOptions test_options(std::chrono::milliseconds busy_timeout = std::chrono::milliseconds(200)) {
  auto now = std::make_shared<std::int64_t>(1'700'000'000'000);
  StoreOptions options;
  options.busy_timeout = busy_timeout;
  options.now_ms = [now] { return ++*now; };
  return options;
}

inline std::string scratch_file(const std::string& test_name, const std::string& file = "inferscope.sqlite") {
  return (inferscope::testing::scratch_dir("store-" + test_name) / file).string();
}

// A plain sqlite3 connection; the test fails (not crashes) when SQL does.
class RawConnection {
 public:
  explicit RawConnection(const std::string& path) { sqlite3_open(path.c_str(), &db_); }
  ~RawConnection() { sqlite3_close(db_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  // Empty on success, SQLite's message otherwise.
  std::string exec(const std::string& sql) {
    char* error = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) == SQLITE_OK) return {};
    std::string message = error != nullptr ? error : "unknown error";
    sqlite3_free(error);
    return message;
  }

  std::int64_t query_int(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    std::int64_t value = -1;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW) {
      value = sqlite3_column_int64(stmt, 0);
    }
    sqlite3_finalize(stmt);
    return value;
  }

 private:
  sqlite3* db_ = nullptr;
};

inline std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_file_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace inferscope::store::testing
