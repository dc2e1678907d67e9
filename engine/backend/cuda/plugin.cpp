// The entry point of libinferscope_cuda.so (engine/backend/backend_plugin.h): lists the CUDA
// devices, or says why there are none, and creates CudaOps on them.
#include "engine/backend/backend_plugin.h"
#include "engine/backend/cuda/cuda_context.h"
#include "engine/backend/cuda/cuda_devices.h"
#include "engine/backend/cuda/cuda_ops.h"

namespace inferscope::cuda {
namespace {

class CudaPlugin : public BackendPlugin {
 public:
  const char* name() const override { return "cuda"; }
  const char* label() const override { return "CUDA"; }

  Result<std::vector<BackendDevice>> devices() override { return list_devices(); }

  Result<std::unique_ptr<BackendOps>> create_ops(std::shared_ptr<const Model> model, int device,
                                                 ThreadPool*) override {
    auto devices = list_devices();
    if (!devices) return devices.status();
    if (device < 0 || device >= static_cast<int>(devices->size())) {
      return Status::error("there is no CUDA device " + std::to_string(device) + " (" +
                           std::to_string(devices->size()) + " found)");
    }
    auto context = CudaContext::create(device);
    if (!context) return context.status();
    return std::unique_ptr<BackendOps>(std::make_unique<CudaOps>(std::move(model), std::move(*context)));
  }
};

}  // namespace
}  // namespace inferscope::cuda

INFERSCOPE_BACKEND_ENTRY_POINT(inferscope::cuda::CudaPlugin)
