// Chooses and loads compute backends. The CPU backend is built in; the others are shared
// libraries loaded on first use from, in order: $INFERSCOPE_BACKEND_DIR, <exe dir>/../lib/inferscope,
// and the build tree. A missing library, loader or driver is an error message, never a crash,
// and the CPU backend stays available.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/backend/backend_plugin.h"
#include "engine/core/status.h"

namespace inferscope {

enum class BackendKind { Cpu, Vulkan, Cuda };

struct BackendChoice {
  BackendKind kind = BackendKind::Cpu;
  int device = 0;
};

const char* backend_kind_name(BackendKind kind);  // "cpu", "vulkan", "cuda"
std::optional<BackendKind> backend_kind_from_name(std::string_view name);

// The loaded plugin of a non-CPU backend (loaded once per process and kept).
Result<BackendPlugin*> load_backend(BackendKind kind);

// A backend's devices, or why it has none.
struct BackendDevices {
  BackendKind kind = BackendKind::Cpu;
  std::vector<BackendDevice> devices;
  std::string unavailable_reason;  // empty when devices were listed
};
BackendDevices list_backend_devices(BackendKind kind);

}  // namespace inferscope
