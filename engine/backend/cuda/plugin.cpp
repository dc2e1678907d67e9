// The entry point of libinferscope_cuda.so (engine/backend/backend_plugin.h): lists the CUDA
// devices, or says why there are none. The backend's ops (BackendOps over cuBLAS and its own
// kernels) are not written yet, so it runs no model: create_executor says so (docs/CUDA.md).
#include "engine/backend/backend_plugin.h"
#include "engine/backend/cuda/cuda_devices.h"

namespace inferscope::cuda {
namespace {

class CudaPlugin : public BackendPlugin {
 public:
  const char* name() const override { return "cuda"; }
  const char* label() const override { return "CUDA"; }

  Result<std::vector<BackendDevice>> devices() override { return list_devices(); }

  Result<std::unique_ptr<ForwardExecutor>> create_executor(std::shared_ptr<const Model>, int device,
                                                          const ForwardOptions&) override {
    auto devices = list_devices();
    if (!devices) return devices.status();
    if (device < 0 || device >= static_cast<int>(devices->size())) {
      return Status::error("there is no CUDA device " + std::to_string(device) + " (" +
                           std::to_string(devices->size()) + " found)");
    }
    return Status::error("the CUDA backend lists devices but cannot run a model yet: its ops are not written "
                         "(docs/CUDA.md); use --backend cpu or vulkan");
  }
};

}  // namespace
}  // namespace inferscope::cuda

INFERSCOPE_BACKEND_ENTRY_POINT(inferscope::cuda::CudaPlugin)
