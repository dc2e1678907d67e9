// The interface every compute backend implements: the built-in CPU one
// (engine/backend/cpu/cpu_plugin) and each run-time-loaded library libinferscope_<name>.so.
// A library exports one C function, kBackendEntryPoint, returning its BackendPlugin for the
// ABI version it was built with; the engine and the library are built from the same sources.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/backend/backend_ops.h"
#include "engine/core/status.h"
#include "engine/model/model.h"

namespace inferscope {

class ThreadPool;

constexpr uint32_t kBackendAbiVersion = 5;
constexpr const char* kBackendEntryPoint = "inferscope_backend_plugin";

// One device of a backend, as `inspect` and the app's device picker show it.
struct BackendDevice {
  int index = 0;  // --device N
  std::string name;
  uint64_t memory_bytes = 0;
  // Ordered (label, value) pairs: type, driver, subgroup size, limits, features...
  std::vector<std::pair<std::string, std::string>> properties;
};

class BackendPlugin {
 public:
  virtual ~BackendPlugin() = default;
  virtual const char* name() const = 0;   // "vulkan": --backend, settings, file name
  virtual const char* label() const = 0;  // "Vulkan": what users read
  // The devices the backend can run on; an error says why there are none (no driver...).
  virtual Result<std::vector<BackendDevice>> devices() = 0;
  // The backend's ops for `model` on `device`, nothing uploaded yet (the forward pass,
  // engine/graph/forward_pass.h, checks the fit, then uploads and allocates through them).
  // `host_threads` is the session's thread pool, for backends that compute on the host.
  virtual Result<std::unique_ptr<BackendOps>> create_ops(std::shared_ptr<const Model> model, int device,
                                                         ThreadPool* host_threads) = 0;
};

using BackendEntryPoint = BackendPlugin* (*)(uint32_t abi_version);

}  // namespace inferscope

// Defines a backend library's entry point (kBackendEntryPoint): one PluginClass for the ABI
// version it was built with, null for any other. At global scope, once per library.
#define INFERSCOPE_BACKEND_ENTRY_POINT(PluginClass)                                                               \
  extern "C" __attribute__((visibility("default"))) inferscope::BackendPlugin* inferscope_backend_plugin(         \
      uint32_t abi_version) {                                                                                     \
    if (abi_version != inferscope::kBackendAbiVersion) return nullptr;                                            \
    static PluginClass plugin;                                                                                    \
    return &plugin;                                                                                               \
  }
