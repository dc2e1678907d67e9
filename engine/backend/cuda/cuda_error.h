// CUDA runtime and cuBLAS results as Status: every failing call becomes an error that names the
// call and the CUDA error ("cudaMalloc(KV cache): out of memory (cudaErrorMemoryAllocation)").
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

#include "engine/core/status.h"

namespace inferscope::cuda {

// "<call>: <description> (<cudaErrorName>)", or ok for cudaSuccess.
Status cuda_status(cudaError_t error, const std::string& call);
// The same for cuBLAS ("<call>: <CUBLAS_STATUS_NAME>").
Status cublas_status(cublasStatus_t status, const std::string& call);

// Why a machine has no CUDA device, as users read it: "no NVIDIA driver
// (cudaErrorInsufficientDriver)", "no NVIDIA GPU (cudaErrorNoDevice)", or the error itself.
std::string no_device_reason(cudaError_t error);

}  // namespace inferscope::cuda
