// The CUDA emulator itself (kernels/cuda/emulator): the semantics the kernels rely on, each
// checked with a kernel whose result is wrong when a barrier, shuffle or capture misbehaves.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "kernels/cuda/launch.h"
#include "tests/cuda/ops/device_buffer.h"

namespace inferscope::cuda_test {
namespace {

using cuda_kernels::launch_kernel;

// Thread t writes t into shared memory, then after the barrier reads its mirror's value: wrong
// unless every write happened before every read.
__global__ void mirror_through_shared(int* out) {
  __shared__ int values[256];
  values[threadIdx.x] = static_cast<int>(threadIdx.x + blockIdx.x * 1000);
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = values[blockDim.x - 1 - threadIdx.x];
}

TEST(CudaEmulator, SyncthreadsOrdersSharedMemory) {
  DeviceBuffer<int> out(3 * 256);
  ASSERT_EQ(launch_kernel(mirror_through_shared, dim3(3), dim3(256), 0, nullptr, out.get()), cudaSuccess);
  const std::vector<int> got = out.read();
  for (int b = 0; b < 3; ++b) {
    for (int t = 0; t < 256; ++t) EXPECT_EQ(got[static_cast<size_t>(b * 256 + t)], 255 - t + b * 1000);
  }
}

__global__ void warp_shuffles(int* xor_out, int* down_out, int* broadcast_out, unsigned* ballot_out) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int i = static_cast<int>(threadIdx.x);
  int sum = lane;
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  xor_out[i] = sum;
  down_out[i] = __shfl_down_sync(0xffffffffu, lane * 10, 3);
  broadcast_out[i] = __shfl_sync(0xffffffffu, lane + 100 * static_cast<int>(threadIdx.x / 32), 5);
  ballot_out[i] = __ballot_sync(0xffffffffu, lane % 3 == 0);
}

TEST(CudaEmulator, WarpShufflesExchangeWithinEachWarp) {
  DeviceBuffer<int> xr(64), down(64), bcast(64);
  DeviceBuffer<unsigned> ballot(64);
  ASSERT_EQ(launch_kernel(warp_shuffles, dim3(1), dim3(64), 0, nullptr, xr.get(), down.get(), bcast.get(), ballot.get()),
            cudaSuccess);
  unsigned expected_ballot = 0;
  for (int l = 0; l < 32; l += 3) expected_ballot |= 1u << l;
  const auto x = xr.read(), d = down.read(), b = bcast.read();
  const auto bal = ballot.read();
  for (int i = 0; i < 64; ++i) {
    const int lane = i % 32;
    EXPECT_EQ(x[static_cast<size_t>(i)], 31 * 32 / 2);
    EXPECT_EQ(d[static_cast<size_t>(i)], lane + 3 < 32 ? (lane + 3) * 10 : lane * 10) << i;
    EXPECT_EQ(b[static_cast<size_t>(i)], 5 + 100 * (i / 32));
    EXPECT_EQ(bal[static_cast<size_t>(i)], expected_ballot);
  }
}

// Threads that return early no longer hold the others at a barrier (as on Volta and later).
__global__ void early_exit_then_barrier(int* out, int live) {
  if (static_cast<int>(threadIdx.x) >= live) return;
  __shared__ int total;
  if (threadIdx.x == 0) total = 0;
  __syncthreads();
  atomicAdd(&total, 1);
  __syncthreads();
  out[threadIdx.x] = total;
}

TEST(CudaEmulator, ExitedThreadsDoNotBlockBarriers) {
  DeviceBuffer<int> out(128);
  ASSERT_EQ(launch_kernel(early_exit_then_barrier, dim3(1), dim3(128), 0, nullptr, out.get(), 77), cudaSuccess);
  const auto got = out.read();
  for (int i = 0; i < 77; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], 77);
}

__global__ void dynamic_shared_sum(const float* in, float* out) {
  INFERSCOPE_DYNAMIC_SHARED(float, values);
  values[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (unsigned i = 0; i < blockDim.x; ++i) s += values[i];
    out[0] = s;
  }
}

TEST(CudaEmulator, DynamicSharedMemory) {
  std::vector<float> in(96);
  std::iota(in.begin(), in.end(), 1.0f);
  DeviceBuffer<float> d_in(in), out(1);
  ASSERT_EQ(launch_kernel(dynamic_shared_sum, dim3(1), dim3(96), 96 * sizeof(float), nullptr, d_in.get(), out.get()),
            cudaSuccess);
  EXPECT_EQ(out.read()[0], 96.0f * 97.0f / 2.0f);
}

__global__ void add_one(int* x) { x[threadIdx.x] += 1; }

TEST(CudaEmulator, RefusesBadLaunchConfigurations) {
  DeviceBuffer<int> x(4);
  EXPECT_EQ(launch_kernel(add_one, dim3(1), dim3(2048), 0, nullptr, x.get()), cudaErrorInvalidConfiguration);
  EXPECT_EQ(launch_kernel(add_one, dim3(0), dim3(4), 0, nullptr, x.get()), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // read and cleared by the failed launch
}

// A captured graph replays its launches and copies, reading a copy's source when it runs: the
// way the backend's decode graph takes each step's positions.
TEST(CudaEmulator, CapturedGraphReplaysWithCurrentInputs) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  DeviceBuffer<int> x(4);
  ASSERT_EQ(cudaMemset(x.get(), 0, 4 * sizeof(int)), cudaSuccess);
  int* host = nullptr;
  ASSERT_EQ(cudaMallocHost(reinterpret_cast<void**>(&host), 4 * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(x.get(), host, 4 * sizeof(int), cudaMemcpyHostToDevice, stream), cudaSuccess);
  ASSERT_EQ(launch_kernel(add_one, dim3(1), dim3(4), 0, stream, x.get()), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaErrorStreamCaptureUnsupported);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  EXPECT_EQ(x.read(), std::vector<int>(4, 0));  // nothing ran while captured
  for (int step = 1; step <= 3; ++step) {
    for (int i = 0; i < 4; ++i) host[i] = step * 10 + i;
    const uint64_t before = cuda_emulator::launches();
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    EXPECT_EQ(cuda_emulator::launches(), before + 1);
    EXPECT_EQ(x.read(), (std::vector<int>{step * 10 + 1, step * 10 + 2, step * 10 + 3, step * 10 + 4}));
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaFreeHost(host);
  cudaStreamDestroy(stream);
}

TEST(CudaEmulator, AllocationsBeyondTheDeviceFail) {
  cuda_emulator::set_device_memory(std::size_t{64} << 20);
  void* a = nullptr;
  void* b = nullptr;
  EXPECT_EQ(cudaMalloc(&a, std::size_t{40} << 20), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&b, std::size_t{40} << 20), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
  size_t free_bytes = 0, total = 0;
  EXPECT_EQ(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
  EXPECT_EQ(total, std::size_t{64} << 20);
  EXPECT_EQ(free_bytes, std::size_t{24} << 20);
  cudaFree(a);
  cuda_emulator::set_device_memory(std::size_t{16} << 30);
}

}  // namespace
}  // namespace inferscope::cuda_test
