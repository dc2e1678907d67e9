// Kernel launches for kernels/cuda/*.cu, the one way they start a kernel: built by nvcc it is the
// <<<grid, block, shared, stream>>> launch; built as C++ against the emulator (emulator/, for the
// tests on machines without a GPU) it runs the kernel's threads as fibers on the CPU.
// Dynamic shared memory is declared with INFERSCOPE_DYNAMIC_SHARED(type, name) at the top of a
// kernel, for the same reason.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <tuple>
#include <utility>

#if defined(INFERSCOPE_CUDA_EMULATOR)
#define INFERSCOPE_DYNAMIC_SHARED(type, name) type* name = static_cast<type*>(::cuda_emulator::dynamic_shared())
#else
#define INFERSCOPE_DYNAMIC_SHARED(type, name) \
  extern __shared__ __align__(16) unsigned char inferscope_dynamic_shared_bytes[];   \
  type* name = reinterpret_cast<type*>(inferscope_dynamic_shared_bytes)
#endif

namespace inferscope::cuda_kernels {

// Starts `kernel` on `stream` and returns the launch's error (cudaGetLastError).
template <class... Params, class... Args>
cudaError_t launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared_bytes,
                          cudaStream_t stream, Args&&... args) {
  static_assert(sizeof...(Params) == sizeof...(Args), "a kernel launch with the wrong number of arguments");
#if defined(INFERSCOPE_CUDA_EMULATOR)
  std::tuple<Params...> values(static_cast<Params>(std::forward<Args>(args))...);
  static_cast<void>(::cuda_emulator::launch(grid, block, shared_bytes, stream,
                                            [kernel, values] { std::apply(kernel, values); }));
  return cudaGetLastError();
#else
  kernel<<<grid, block, shared_bytes, stream>>>(static_cast<Params>(std::forward<Args>(args))...);
  return cudaGetLastError();
#endif
}

// Blocks to cover n items with `per_block` each.
inline unsigned blocks_for(long long n, long long per_block) {
  return static_cast<unsigned>((n + per_block - 1) / per_block);
}

}  // namespace inferscope::cuda_kernels
