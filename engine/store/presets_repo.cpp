#include "engine/store/presets_repo.h"

namespace inferscope::store {
namespace {

constexpr const char* kPresetColumns = "SELECT name, settings_json, updated_at FROM presets ";
constexpr const char* kUpsertPreset =
    "INSERT INTO presets (name, settings_json, updated_at) VALUES (?1, ?2, ?3) "
    "ON CONFLICT (name) DO UPDATE SET settings_json = excluded.settings_json, updated_at = excluded.updated_at";
constexpr const char* kDeletePreset = "DELETE FROM presets WHERE name = ?1";
constexpr const char* kIsValidJson = "SELECT json_valid(?1)";

Preset preset_from_row(const Statement& row) { return Preset{row.text_at(0), row.text_at(1), row.int64_at(2)}; }

}  // namespace

Status PresetsRepo::save(const std::string& name, const std::string& settings_json) {
  const std::string what = "saving preset \"" + name + "\"";
  if (name.empty()) return Status::error(db_.path() + ": " + what + ": a preset needs a name");
  Result<Statement> check = db_.prepare(kIsValidJson);
  if (!check) return check.status();
  check->bind(1, settings_json);
  Result<bool> row = check->step();
  if (!row) return row.status();
  if (check->int64_at(0) != 1) return Status::error(db_.path() + ": " + what + ": settings are not valid JSON");
  return db_.write_transaction(what, [&]() -> Status {
    Result<Statement> upsert = db_.prepare(kUpsertPreset);
    if (!upsert) return upsert.status();
    upsert->bind(1, name).bind(2, settings_json).bind(3, db_.now_ms());
    return upsert->run();
  });
}

Result<Preset> PresetsRepo::load(const std::string& name) {
  Result<Statement> select = db_.prepare(std::string(kPresetColumns) + "WHERE name = ?1");
  if (!select) return select.status();
  select->bind(1, name);
  Result<bool> row = select->step();
  if (!row) return row.status();
  if (!*row) return Status::error(db_.path() + ": no preset named \"" + name + "\"");
  return preset_from_row(*select);
}

Result<std::vector<Preset>> PresetsRepo::list() {
  Result<Statement> select = db_.prepare(std::string(kPresetColumns) + "ORDER BY name");
  if (!select) return select.status();
  std::vector<Preset> presets;
  for (;;) {
    Result<bool> row = select->step();
    if (!row) return row.status();
    if (!*row) return presets;
    presets.push_back(preset_from_row(*select));
  }
}

Status PresetsRepo::remove(const std::string& name) {
  const std::string what = "deleting preset \"" + name + "\"";
  return db_.write_transaction(what, [&]() -> Status {
    Result<Statement> remove = db_.prepare(kDeletePreset);
    if (!remove) return remove.status();
    remove->bind(1, name);
    INFERSCOPE_RETURN_IF_ERROR(remove->run());
    if (db_.changed_rows() == 1) return Status::ok();
    return Status::error(db_.path() + ": " + what + ": no preset with that name");
  });
}

}  // namespace inferscope::store
