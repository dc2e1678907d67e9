#include "engine/backend/cuda/cuda_devices.h"

#include <cuda_runtime.h>

#include <string>

#include "engine/backend/cuda/cuda_error.h"

namespace inferscope::cuda {

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

namespace {

BackendDevice describe(int index, const cudaDeviceProp& p, int driver_version, int runtime_version) {
  BackendDevice d;
  d.index = index;
  d.name = p.name;
  d.memory_bytes = p.totalGlobalMem;
  d.properties = {
      {"type", "NVIDIA GPU"},
      {"compute capability", std::to_string(p.major) + "." + std::to_string(p.minor)},
      {"memory", std::to_string(p.totalGlobalMem >> 20) + " MiB"},
      {"multiprocessors", std::to_string(p.multiProcessorCount)},
      {"memory bus", std::to_string(p.memoryBusWidth) + " bits"},
      {"L2 cache", std::to_string(p.l2CacheSize >> 10) + " KiB"},
      {"shared memory per block", std::to_string(p.sharedMemPerBlockOptin >> 10) + " KiB"},
      {"driver CUDA", cuda_version_text(driver_version)},
      {"runtime CUDA", cuda_version_text(runtime_version)},
  };
  return d;
}

}  // namespace

Result<std::vector<BackendDevice>> list_devices() {
  int count = 0;
  const cudaError_t counted = cudaGetDeviceCount(&count);
  if (counted != cudaSuccess) return Status::error(no_device_reason(counted));
  if (count == 0) return Status::error(no_device_reason(cudaErrorNoDevice));
  int driver_version = 0, runtime_version = 0;
  INFERSCOPE_RETURN_IF_ERROR(cuda_status(cudaDriverGetVersion(&driver_version), "cudaDriverGetVersion"));
  INFERSCOPE_RETURN_IF_ERROR(cuda_status(cudaRuntimeGetVersion(&runtime_version), "cudaRuntimeGetVersion"));
  std::vector<BackendDevice> devices;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    INFERSCOPE_RETURN_IF_ERROR(cuda_status(cudaGetDeviceProperties(&p, i), "cudaGetDeviceProperties"));
    devices.push_back(describe(i, p, driver_version, runtime_version));
  }
  return devices;
}

}  // namespace inferscope::cuda
