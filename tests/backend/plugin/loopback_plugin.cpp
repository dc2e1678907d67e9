// libinferscope_loopback.so: a backend plug-in built only for the registry's tests, the way a
// new backend is added (cmake/InferscopeBackend.cmake): its entry point, its devices, and its
// ops (here the CPU's, on the session's threads). Nothing outside
// tests/backend names it; the registry finds it when INFERSCOPE_BACKEND_DIR points at it.
#include "engine/backend/backend_plugin.h"
#include "engine/backend/cpu/cpu_ops.h"

namespace inferscope::testing {
namespace {

class LoopbackPlugin : public BackendPlugin {
 public:
  const char* name() const override { return "loopback"; }
  const char* label() const override { return "Loopback"; }

  Result<std::vector<BackendDevice>> devices() override {
    BackendDevice device;
    device.name = "loopback device (CPU ops)";
    device.memory_bytes = uint64_t(1) << 30;
    device.properties = {{"type", "test"}};
    return std::vector<BackendDevice>{device};
  }

  Result<std::unique_ptr<BackendOps>> create_ops(std::shared_ptr<const Model> model, int device,
                                                 ThreadPool* host_threads) override {
    if (device != 0 || !host_threads) return Status::error("the loopback backend has one device, 0");
    return std::unique_ptr<BackendOps>(std::make_unique<CpuOps>(std::move(model), *host_threads));
  }
};

}  // namespace
}  // namespace inferscope::testing

INFERSCOPE_BACKEND_ENTRY_POINT(inferscope::testing::LoopbackPlugin)
