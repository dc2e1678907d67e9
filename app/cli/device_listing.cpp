#include "app/cli/device_listing.h"

#include <cstdio>

namespace inferscope::cli {

void print_devices(const BackendDevices& d, int only_device) {
  const char* name = d.backend.c_str();
  if (!d.unavailable_reason.empty()) {
    std::printf("%s: no devices (%s)\n", name, d.unavailable_reason.c_str());
    return;
  }
  for (const BackendDevice& dev : d.devices) {
    if (only_device >= 0 && dev.index != only_device) continue;
    std::printf("%s device %d: %s\n", name, dev.index, dev.name.c_str());
    for (const auto& [label, value] : dev.properties) std::printf("  %-28s %s\n", label.c_str(), value.c_str());
  }
}

nlohmann::json devices_json(const BackendDevices& d, int only_device) {
  nlohmann::json j = {{"backend", d.backend}};
  if (!d.unavailable_reason.empty()) j["unavailable"] = d.unavailable_reason;
  nlohmann::json list = nlohmann::json::array();
  for (const BackendDevice& dev : d.devices) {
    if (only_device >= 0 && dev.index != only_device) continue;
    nlohmann::json props = nlohmann::json::object();
    for (const auto& [label, value] : dev.properties) props[label] = value;
    list.push_back({{"index", dev.index}, {"name", dev.name}, {"memory_bytes", dev.memory_bytes}, {"properties", props}});
  }
  j["devices"] = list;
  return j;
}

}  // namespace inferscope::cli
