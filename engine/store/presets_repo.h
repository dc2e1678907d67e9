// Named settings presets (sampling, context, backend...), stored as JSON text the app owns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/store/database.h"

namespace inferscope::store {

struct Preset {
  std::string name;
  std::string settings_json;
  std::int64_t updated_at = 0;  // Unix ms
};

class PresetsRepo {
 public:
  explicit PresetsRepo(Database& db) : db_(db) {}

  // Creates the preset or overwrites the one with that name. The JSON must be valid.
  Status save(const std::string& name, const std::string& settings_json);
  Result<Preset> load(const std::string& name);
  // By name.
  Result<std::vector<Preset>> list();
  Status remove(const std::string& name);

 private:
  Database& db_;
};

}  // namespace inferscope::store
