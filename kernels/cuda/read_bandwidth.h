// A memory-bandwidth probe: the kernel streams a buffer once (16-byte loads, many in flight per
// thread) and adds it up, so its time is the time to read the buffer from device memory: the
// bound a memory-bound decode kernel is measured against (docs/CUDA.md).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace inferscope::cuda_kernels {

// Reads data[0 .. n) (device memory, 16-byte aligned) and writes one partial sum per block to
// partial[0 .. blocks) (device memory). threads: a power of two, 32 to 1024.
cudaError_t launch_read_sum(const float4* data, std::size_t n, float* partial, int blocks, int threads,
                            cudaStream_t stream);

}  // namespace inferscope::cuda_kernels
