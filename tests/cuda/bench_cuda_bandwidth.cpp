// The device's memory bandwidth, the bound of the CUDA backend's decode target (docs/CUDA.md):
// a device-to-device copy (cudaMemcpy: bytes read plus bytes written over its time) and the read
// probe (kernels/cuda/read_bandwidth: bytes read over its time), each the best of --repeats,
// timed with CUDA events. Plain executable, by hand or from tests/device/cuda_check.sh:
//   build/tests/cuda/bench_cuda_bandwidth [--device N] [--bytes N] [--repeats N]
// Without a device it prints why and exits 1.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/backend/cuda/cuda_devices.h"
#include "engine/backend/cuda/cuda_error.h"
#include "kernels/cuda/read_bandwidth.h"

namespace {

using inferscope::Status;
using inferscope::cuda::cuda_status;

struct Options {
  int device = 0;
  std::size_t bytes = std::size_t{4} << 30;
  int repeats = 10;
};

int fail(const Status& s) {
  std::fprintf(stderr, "error: %s\n", s.message().c_str());
  return 1;
}

// The best time (ms) of `repeats` runs of `run`, between two events on the default stream.
template <class Run>
Status best_ms(int repeats, Run run, float* best) {
  cudaEvent_t start, stop;
  INFERSCOPE_RETURN_IF_ERROR(cuda_status(cudaEventCreate(&start), "cudaEventCreate"));
  INFERSCOPE_RETURN_IF_ERROR(cuda_status(cudaEventCreate(&stop), "cudaEventCreate"));
  *best = 1e30f;
  for (int r = 0; r < repeats; ++r) {
    INFERSCOPE_RETURN_IF_ERROR(cuda_status(cudaEventRecord(start), "cudaEventRecord"));
    INFERSCOPE_RETURN_IF_ERROR(run());
    INFERSCOPE_RETURN_IF_ERROR(cuda_status(cudaEventRecord(stop), "cudaEventRecord"));
    INFERSCOPE_RETURN_IF_ERROR(cuda_status(cudaEventSynchronize(stop), "cudaEventSynchronize"));
    float ms = 0;
    INFERSCOPE_RETURN_IF_ERROR(cuda_status(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime"));
    *best = std::min(*best, ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return Status::ok();
}

int run(const Options& o) {
  auto devices = inferscope::cuda::list_devices();
  if (!devices) return fail(devices.status());
  if (o.device < 0 || o.device >= static_cast<int>(devices->size())) return fail(Status::error("no such device"));
  Status s = cuda_status(cudaSetDevice(o.device), "cudaSetDevice");
  if (!s) return fail(s);
  const std::size_t n4 = o.bytes / sizeof(float4);
  const std::size_t bytes = n4 * sizeof(float4);
  void *a = nullptr, *b = nullptr;
  float* partial = nullptr;
  int sms = 0;
  if (!(s = cuda_status(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, o.device), "cudaDeviceGetAttribute")) ||
      !(s = cuda_status(cudaMalloc(&a, bytes), "cudaMalloc(source)")) ||
      !(s = cuda_status(cudaMalloc(&b, bytes), "cudaMalloc(destination)")) ||
      !(s = cuda_status(cudaMemset(a, 0, bytes), "cudaMemset"))) {
    return fail(s);
  }
  const int threads = 512, blocks = sms * 8;
  if (!(s = cuda_status(cudaMalloc(&partial, blocks * sizeof(float)), "cudaMalloc(partial sums)"))) return fail(s);
  float copy_ms = 0, read_ms = 0;
  s = best_ms(o.repeats, [&] { return cuda_status(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy"); },
              &copy_ms);
  if (!s) return fail(s);
  s = best_ms(o.repeats, [&] {
    return cuda_status(inferscope::cuda_kernels::launch_read_sum(static_cast<const float4*>(a), n4, partial, blocks,
                                                                  threads, nullptr),
                       "read_sum");
  }, &read_ms);
  if (!s) return fail(s);
  std::printf("%s, %.1f GiB buffer, best of %d:\n", devices->at(o.device).name.c_str(),
              static_cast<double>(bytes) / (1 << 30), o.repeats);
  std::printf("device-to-device copy: %.1f GB/s (read + write)\n", 2.0 * static_cast<double>(bytes) / copy_ms / 1e6);
  std::printf("read probe (%d blocks x %d threads): %.1f GB/s (read)\n", blocks, threads,
              static_cast<double>(bytes) / read_ms / 1e6);
  cudaFree(a);
  cudaFree(b);
  cudaFree(partial);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    if (key == "--device") o.device = std::atoi(argv[i + 1]);
    else if (key == "--bytes") o.bytes = std::strtoull(argv[i + 1], nullptr, 10);
    else if (key == "--repeats") o.repeats = std::max(1, std::atoi(argv[i + 1]));
    else {
      std::fprintf(stderr, "usage: bench_cuda_bandwidth [--device N] [--bytes N] [--repeats N]\n");
      return 2;
    }
  }
  return run(o);
}
