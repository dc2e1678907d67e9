// The stream every op of one CUDA backend instance is issued on, and the cuBLAS handle bound to
// it, for one device.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <memory>

#include "engine/core/status.h"

namespace inferscope::cuda {

class CudaContext {
 public:
  // Selects `device` for the calling thread and creates the stream and the handle.
  static Result<std::unique_ptr<CudaContext>> create(int device);
  ~CudaContext();
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() const { return cublas_; }
  // Makes `device` current on the calling thread (sessions may call from several threads).
  Status make_current() const;
  // Waits for everything issued on the stream.
  Status synchronize() const;

 private:
  CudaContext() = default;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
};

}  // namespace inferscope::cuda
