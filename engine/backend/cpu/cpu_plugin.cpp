#include "engine/backend/cpu/cpu_plugin.h"

#include <algorithm>
#include <thread>

#include "engine/backend/cpu/cpu_ops.h"
#include "engine/core/resident_buffer.h"

namespace inferscope {
namespace {

class CpuPlugin : public BackendPlugin {
 public:
  const char* name() const override { return "cpu"; }
  const char* label() const override { return "CPU"; }

  Result<std::vector<BackendDevice>> devices() override {
    BackendDevice cpu;
    cpu.name = "CPU";
    cpu.memory_bytes = available_memory_bytes();
    cpu.properties = {{"threads", std::to_string(std::max(1u, std::thread::hardware_concurrency())) + " threads"}};
    return std::vector<BackendDevice>{cpu};
  }

  Result<std::unique_ptr<BackendOps>> create_ops(std::shared_ptr<const Model> model, int device,
                                                 ThreadPool* host_threads) override {
    if (device != 0) return Status::error("the CPU backend has one device, 0");
    if (!host_threads) return Status::error("the CPU backend needs the session's thread pool");
    return std::unique_ptr<BackendOps>(std::make_unique<CpuOps>(std::move(model), *host_threads));
  }
};

}  // namespace

BackendPlugin& cpu_backend_plugin() {
  static CpuPlugin plugin;
  return plugin;
}

}  // namespace inferscope
