#include "engine/backend/cuda/cuda_context.h"

#include "engine/backend/cuda/cuda_error.h"

namespace inferscope::cuda {

Result<std::unique_ptr<CudaContext>> CudaContext::create(int device) {
  auto ctx = std::unique_ptr<CudaContext>(new CudaContext());
  ctx->device_ = device;
  INFERSCOPE_RETURN_IF_ERROR(ctx->make_current());
  INFERSCOPE_RETURN_IF_ERROR(
      cuda_status(cudaStreamCreateWithFlags(&ctx->stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"));
  INFERSCOPE_RETURN_IF_ERROR(cublas_status(cublasCreate(&ctx->cublas_), "cublasCreate"));
  INFERSCOPE_RETURN_IF_ERROR(cublas_status(cublasSetStream(ctx->cublas_, ctx->stream_), "cublasSetStream"));
  return ctx;
}

CudaContext::~CudaContext() {
  if (cublas_) cublasDestroy(cublas_);
  if (stream_) cudaStreamDestroy(stream_);
}

Status CudaContext::make_current() const { return cuda_status(cudaSetDevice(device_), "cudaSetDevice"); }

Status CudaContext::synchronize() const { return cuda_status(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

}  // namespace inferscope::cuda
