// Finds, names and loads compute backends. Every backend is a BackendPlugin: the CPU one is
// built in; the others are shared libraries libinferscope_<name>.so, loaded on first use from,
// in order: $INFERSCOPE_BACKEND_DIR, <exe dir>/../lib/inferscope, and the build tree. The
// registry is open: the names are the CPU's, the plug-ins this build configured (CMake's
// inferscope_add_backend) and any other backend library found in those folders, so the CLI
// and the app gain a backend without an edit. A missing library, loader or driver is an error
// message, never a crash, and the CPU backend stays available.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/backend/backend_plugin.h"
#include "engine/core/status.h"

namespace inferscope {

inline constexpr std::string_view kCpuBackend = "cpu";

// A backend by name ("cpu", "vulkan"...) and one of its devices.
struct BackendChoice {
  std::string backend = std::string(kCpuBackend);
  int device = 0;
  bool on_cpu() const { return backend == kCpuBackend; }
  bool operator==(const BackendChoice&) const = default;
};

// "cpu" first, then the other backends' names, sorted.
std::vector<std::string> backend_names();
bool is_backend_name(std::string_view name);
// "CPU", "Vulkan"... as users read it: the plug-in's label, known without loading it for the
// configured ones; the name itself for a library not loaded yet.
std::string backend_label(std::string_view name);

// The backend's plugin (a library is loaded once per process and kept), or why it cannot load.
Result<BackendPlugin*> load_backend(std::string_view name);

// A backend's devices, or why it has none.
struct BackendDevices {
  std::string backend = std::string(kCpuBackend);
  std::vector<BackendDevice> devices;
  std::string unavailable_reason;  // empty when devices were listed
};
BackendDevices list_backend_devices(std::string_view name);

}  // namespace inferscope
