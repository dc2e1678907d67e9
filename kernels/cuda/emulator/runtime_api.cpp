// The emulated CUDA runtime (include/cuda_runtime.h).
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cuda_runtime.h"
#include "kernels/cuda/emulator/grid_runner.h"

struct CUstream_st {
  bool capturing = false;
  std::vector<std::function<void()>> captured;
};
struct CUevent_st {
  std::chrono::steady_clock::time_point when{};
  bool recorded = false;
};
struct CUgraph_st {
  std::vector<std::function<void()>> nodes;
};
struct CUgraphExec_st {
  std::vector<std::function<void()>> nodes;
};

namespace cuda_emulator {
namespace {

struct DeviceMemory {
  std::mutex mutex;
  std::size_t capacity = std::size_t{16} << 30;
  std::size_t in_use = 0;
  std::unordered_map<void*, std::size_t> blocks;
};

DeviceMemory& memory() {
  static DeviceMemory m;
  return m;
}

thread_local cudaError_t last_error = cudaSuccess;
uint64_t launch_count = 0;

cudaError_t fail(cudaError_t e) {
  last_error = e;
  return e;
}

bool capturing(cudaStream_t stream) { return stream && stream->capturing; }

}  // namespace

void set_device_memory(std::size_t bytes) {
  std::lock_guard lock(memory().mutex);
  memory().capacity = bytes;
}

std::size_t device_memory_in_use() {
  std::lock_guard lock(memory().mutex);
  return memory().in_use;
}

uint64_t launches() { return launch_count; }

cudaError_t enqueue(cudaStream_t stream, std::function<void()> work) {
  if (capturing(stream)) {
    stream->captured.push_back(std::move(work));
  } else {
    work();
  }
  return cudaSuccess;
}

cudaError_t launch(dim3 grid, dim3 block, std::size_t shared_bytes, cudaStream_t stream,
                   std::function<void()> thread_body) {
  const unsigned long long threads = static_cast<unsigned long long>(block.x) * block.y * block.z;
  if (threads == 0 || threads > kMaxThreadsPerBlock || block.z > 64 || grid.x == 0 || grid.y == 0 || grid.z == 0 ||
      grid.y > 65535 || grid.z > 65535 || shared_bytes > kMaxSharedBytes) {
    return fail(cudaErrorInvalidConfiguration);
  }
  return enqueue(stream, [grid, block, shared_bytes, body = std::move(thread_body)] {
    ++launch_count;
    run_grid(grid, block, shared_bytes, body);
  });
}

}  // namespace cuda_emulator

using cuda_emulator::fail;

cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (device != 0) return fail(cudaErrorInvalidDevice);
  *prop = cudaDeviceProp{};
  std::strncpy(prop->name, "CUDA emulator (host CPU)", sizeof prop->name - 1);
  prop->totalGlobalMem = cuda_emulator::memory().capacity;
  prop->sharedMemPerBlock = 48 * 1024;
  prop->sharedMemPerBlockOptin = cuda_emulator::kMaxSharedBytes;
  prop->major = 9;
  prop->minor = 0;
  prop->multiProcessorCount = 1;
  prop->memoryBusWidth = 64;
  prop->l2CacheSize = 1 << 20;
  prop->warpSize = 32;
  prop->maxThreadsPerBlock = static_cast<int>(cuda_emulator::kMaxThreadsPerBlock);
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : fail(cudaErrorInvalidDevice); }
cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int* version) {
  *version = 13000;
  return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int* version) {
  *version = 13000;
  return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }

cudaError_t cudaMemGetInfo(std::size_t* free_bytes, std::size_t* total_bytes) {
  std::lock_guard lock(cuda_emulator::memory().mutex);
  *total_bytes = cuda_emulator::memory().capacity;
  *free_bytes = *total_bytes - std::min(*total_bytes, cuda_emulator::memory().in_use);
  return cudaSuccess;
}

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInsufficientDriver: return "cudaErrorInsufficientDriver";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorStreamCaptureUnsupported: return "cudaErrorStreamCaptureUnsupported";
    case cudaErrorStreamCaptureInvalidated: return "cudaErrorStreamCaptureInvalidated";
    case cudaErrorIllegalState: return "cudaErrorIllegalState";
  }
  return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
    case cudaErrorStreamCaptureInvalidated: return "operation failed due to a previous error during capture";
    case cudaErrorIllegalState: return "the operation cannot be performed in the present state";
  }
  return "unknown error";
}

cudaError_t cudaGetLastError() {
  const cudaError_t e = cuda_emulator::last_error;
  cuda_emulator::last_error = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError() { return cuda_emulator::last_error; }

cudaError_t cudaMalloc(void** ptr, std::size_t bytes) {
  auto& m = cuda_emulator::memory();
  std::lock_guard lock(m.mutex);
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + 255) / 256 * 256;
  if (rounded > m.capacity - std::min(m.capacity, m.in_use)) return fail(cudaErrorMemoryAllocation);
  void* p = std::aligned_alloc(256, rounded);
  if (!p) return fail(cudaErrorMemoryAllocation);
  m.blocks[p] = rounded;
  m.in_use += rounded;
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaFree(void* ptr) {
  if (!ptr) return cudaSuccess;
  auto& m = cuda_emulator::memory();
  std::lock_guard lock(m.mutex);
  auto it = m.blocks.find(ptr);
  if (it == m.blocks.end()) return fail(cudaErrorInvalidValue);
  m.in_use -= it->second;
  m.blocks.erase(it);
  std::free(ptr);
  return cudaSuccess;
}

cudaError_t cudaMallocHost(void** ptr, std::size_t bytes) {
  *ptr = std::aligned_alloc(256, (std::max<std::size_t>(bytes, 1) + 255) / 256 * 256);
  return *ptr ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}
cudaError_t cudaHostAlloc(void** ptr, std::size_t bytes, unsigned) { return cudaMallocHost(ptr, bytes); }
cudaError_t cudaFreeHost(void* ptr) {
  std::free(ptr);
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind) {
  if (bytes && (!dst || !src)) return fail(cudaErrorInvalidValue);
  if (bytes) std::memmove(dst, src, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind, cudaStream_t stream) {
  if (bytes && (!dst || !src)) return fail(cudaErrorInvalidValue);
  return cuda_emulator::enqueue(stream, [dst, src, bytes] {
    if (bytes) std::memmove(dst, src, bytes);
  });
}

cudaError_t cudaMemset(void* dst, int value, std::size_t bytes) {
  if (bytes && !dst) return fail(cudaErrorInvalidValue);
  if (bytes) std::memset(dst, value, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* dst, int value, std::size_t bytes, cudaStream_t stream) {
  if (bytes && !dst) return fail(cudaErrorInvalidValue);
  return cuda_emulator::enqueue(stream, [dst, value, bytes] {
    if (bytes) std::memset(dst, value, bytes);
  });
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  *stream = new CUstream_st;
  return cudaSuccess;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned) { return cudaStreamCreate(stream); }
cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  delete stream;
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  return cuda_emulator::capturing(stream) ? fail(cudaErrorStreamCaptureUnsupported) : cudaSuccess;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode) {
  if (!stream) return fail(cudaErrorStreamCaptureUnsupported);  // the legacy stream cannot be captured
  if (stream->capturing) return fail(cudaErrorIllegalState);
  stream->capturing = true;
  stream->captured.clear();
  return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  if (!cuda_emulator::capturing(stream)) return fail(cudaErrorIllegalState);
  stream->capturing = false;
  *graph = new CUgraph_st{std::move(stream->captured)};
  stream->captured.clear();
  return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  *status = cuda_emulator::capturing(stream) ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
  return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long) {
  if (!graph) return fail(cudaErrorInvalidValue);
  *exec = new CUgraphExec_st{graph->nodes};
  return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  if (!exec) return fail(cudaErrorInvalidValue);
  if (cuda_emulator::capturing(stream)) return fail(cudaErrorStreamCaptureUnsupported);
  for (const auto& node : exec->nodes) node();
  return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  delete exec;
  return cudaSuccess;
}
cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  delete graph;
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  *event = new CUevent_st;
  return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned) { return cudaEventCreate(event); }
cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete event;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (!event) return fail(cudaErrorInvalidResourceHandle);
  return cuda_emulator::enqueue(stream, [event] {
    event->when = std::chrono::steady_clock::now();
    event->recorded = true;
  });
}
cudaError_t cudaEventSynchronize(cudaEvent_t event) { return event ? cudaSuccess : fail(cudaErrorInvalidResourceHandle); }
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (!start || !end || !start->recorded || !end->recorded) return fail(cudaErrorInvalidResourceHandle);
  *ms = std::chrono::duration<float, std::milli>(end->when - start->when).count();
  return cudaSuccess;
}
