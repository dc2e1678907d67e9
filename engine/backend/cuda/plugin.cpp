// The entry point of libinferscope_cuda.so (engine/backend/backend_plugin.h): lists the CUDA
// devices, or says why there are none, and creates forward passes on them over CudaOps.
#include "engine/backend/backend_plugin.h"
#include "engine/backend/cuda/cuda_context.h"
#include "engine/backend/cuda/cuda_devices.h"
#include "engine/backend/cuda/cuda_ops.h"
#include "engine/model/forward_pass.h"

namespace inferscope::cuda {
namespace {

class CudaPlugin : public BackendPlugin {
 public:
  const char* name() const override { return "cuda"; }
  const char* label() const override { return "CUDA"; }

  Result<std::vector<BackendDevice>> devices() override { return list_devices(); }

  Result<std::unique_ptr<ForwardExecutor>> create_executor(std::shared_ptr<const Model> model, int device,
                                                          const ForwardOptions& options) override {
    auto devices = list_devices();
    if (!devices) return devices.status();
    if (device < 0 || device >= static_cast<int>(devices->size())) {
      return Status::error("there is no CUDA device " + std::to_string(device) + " (" +
                           std::to_string(devices->size()) + " found)");
    }
    auto context = CudaContext::create(device);
    if (!context) return context.status();
    auto ops = std::make_unique<CudaOps>(model, std::move(*context));
    auto fp = ForwardPass::create(std::move(model), std::move(ops), options);
    if (!fp) return fp.status();
    return std::unique_ptr<ForwardExecutor>(std::move(*fp));
  }
};

}  // namespace
}  // namespace inferscope::cuda

INFERSCOPE_BACKEND_ENTRY_POINT(inferscope::cuda::CudaPlugin)
