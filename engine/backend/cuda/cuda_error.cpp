#include "engine/backend/cuda/cuda_error.h"

namespace inferscope::cuda {

Status cuda_status(cudaError_t error, const std::string& call) {
  if (error == cudaSuccess) return Status::ok();
  return Status::error(call + ": " + cudaGetErrorString(error) + " (" + cudaGetErrorName(error) + ")");
}

Status cublas_status(cublasStatus_t status, const std::string& call) {
  if (status == CUBLAS_STATUS_SUCCESS) return Status::ok();
  return Status::error(call + ": " + cublasGetStatusName(status) + " (" + cublasGetStatusString(status) + ")");
}

std::string no_device_reason(cudaError_t error) {
  const std::string name = cudaGetErrorName(error);
  switch (error) {
    case cudaErrorInsufficientDriver:
      return "no NVIDIA driver (" + name + ")";
    case cudaErrorNoDevice:
      return "no NVIDIA GPU (" + name + ")";
    default:
      return std::string(cudaGetErrorString(error)) + " (" + name + ")";
  }
}

}  // namespace inferscope::cuda
