#include "engine/store/store.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "engine/store/integrity.h"
#include "engine/store/migrations.h"
#include "engine/store/schema.h"

namespace inferscope::store {
namespace {

namespace fs = std::filesystem;

std::string utc_timestamp(std::int64_t unix_ms) {
  const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &utc);
  return text;
}

fs::path recovered_path(const fs::path& damaged, const std::string& timestamp, int attempt) {
  const std::string extension = damaged.has_extension() ? damaged.extension().string() : ".sqlite";
  std::string name = damaged.stem().string() + ".recovered-" + timestamp;
  if (attempt > 0) name += "-" + std::to_string(attempt + 1);
  return damaged.parent_path() / (name + extension);
}

// Claims a file name nobody uses (O_EXCL), so no existing file is ever reused or overwritten.
Result<std::string> create_unused_file_beside(const std::string& damaged_path, std::int64_t now_ms) {
  constexpr int kAttempts = 100;
  const std::string timestamp = utc_timestamp(now_ms);
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    const fs::path candidate = recovered_path(fs::path(damaged_path), timestamp, attempt);
    const int fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
      ::close(fd);
      return candidate.string();
    }
    if (errno != EEXIST) {
      return Status::error(candidate.string() + ": cannot create a fresh database: " + std::strerror(errno));
    }
  }
  return Status::error(damaged_path + ": cannot find an unused name for a fresh database beside it");
}

std::string newer_version_notice(const std::string& path, int version) {
  return path + " was written by a newer Inferscope (schema version " + std::to_string(version) +
         ", this build knows up to " + std::to_string(current_schema_version()) +
         "); it is open read-only and will not be modified. Update Inferscope to change it.";
}

}  // namespace

Result<Store> Store::open(const std::string& path, const StoreOptions& options) {
  std::error_code ignored;
  if (!fs::exists(path, ignored)) return open_for_writing(path, OpenMode::read_write_create, options, "");

  // Look before touching: checks and the version read happen on a read-only connection, so a
  // damaged or newer file is reported without a single byte of it changed.
  Result<std::unique_ptr<Database>> probe = Database::open(path, OpenMode::read_only, options);
  if (!probe) return probe.status();
  Result<int> version = schema_version(**probe);
  if (!version) return version.status();
  INFERSCOPE_RETURN_IF_ERROR(verify_integrity(**probe, IntegrityCheck::quick));
  if (*version > current_schema_version()) return Store(std::move(*probe), newer_version_notice(path, *version));
  probe->reset();
  return open_for_writing(path, OpenMode::read_write, options, "");
}

Result<Store> Store::open_read_only(const std::string& path, const StoreOptions& options) {
  Result<std::unique_ptr<Database>> db = Database::open(path, OpenMode::read_only, options);
  if (!db) return db.status();
  // SQLite opens lazily; reading the header now turns "not a database" into an error here.
  Result<int> version = schema_version(**db);
  if (!version) return version.status();
  return Store(std::move(*db), path + " is open read-only; changes cannot be saved.");
}

Result<Store> Store::open_fresh_beside(const std::string& damaged_path, const StoreOptions& options) {
  Result<std::string> fresh = create_unused_file_beside(damaged_path, options.now_ms());
  if (!fresh) return fresh.status();
  return open_for_writing(*fresh, OpenMode::read_write, options,
                          "Started a fresh database " + *fresh + "; the damaged " + damaged_path +
                              " is kept unchanged beside it.");
}

Result<Store> Store::open_for_writing(const std::string& path, OpenMode mode, const StoreOptions& options,
                                      std::string notice) {
  Result<std::unique_ptr<Database>> db = Database::open(path, mode, options);
  if (!db) return db.status();
  INFERSCOPE_RETURN_IF_ERROR((*db)->configure_for_writing());
  INFERSCOPE_RETURN_IF_ERROR(migrate_to_current(**db));
  return Store(std::move(*db), std::move(notice));
}

Status Store::check_integrity() { return verify_integrity(*db_, IntegrityCheck::full); }

}  // namespace inferscope::store
