// `inspect --devices` and `inspect --backend NAME --device N`: the compute devices each backend
// sees, with their memory and limits, or why a backend has none.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/backend/backend_registry.h"

namespace inferscope::cli {

void print_devices(const BackendDevices& devices, int only_device = -1);
nlohmann::json devices_json(const BackendDevices& devices, int only_device = -1);

}  // namespace inferscope::cli
