// Throughput of the Vulkan matmul shaders (engine/backend/vulkan/ops/vk_matmul.h) on device 0:
//   matvec  n = 1..8 tokens through `copies` distinct copies of a rows x cols matrix (64 MiB of
//           weights in all, so they stream from memory as a model's do): GB/s of weights
//   auto    n = 64..512 tokens through one matrix with record_matmul's own choice (on CPU
//           drivers the row-per-invocation matvec): rows * tokens / s and GFLOP/s
//   matmat  the same with the tiled matmat shader forced
// Times are wall clock around one submission of many dispatches (dispatch overhead included),
// and the process's CPU time (per CPU-second figures: what one core does, unaffected by other
// load on a shared machine).
// Usage: bench_vulkan_matmul [--types q4_0,q8_0,q4_K,f16] [--shape 2048x768]
//          [--mv-wg N] [--mv-rows N] [--mv-tokens N] [--rowwise 0|1] [--mm-tile BM,BN,TM,TN]
//          [--mv-only] [--mm-only] [--int8 0|1] [--native 0|1]
// The quantized types' matvec runs in int8 on x quantized once per submission (as the forward
// pass quantizes once for the products that share an input); --int8 0 runs it in float,
// --native 0 in the portable variant (no dot-product instructions or 16-bit storage).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/backend/vulkan/ops/vk_matmul.h"
#include "engine/backend/vulkan/ops/vk_quantize.h"
#include "engine/backend/vulkan/vk_device.h"
#include "engine/backend/vulkan/vk_recorder.h"
#include "kernels/formats/ggml_type.h"
#include "kernels/cpu/quantize.h"

namespace {

using namespace inferscope;
using namespace inferscope::vulkan;
using kernels::GgmlType;

void die(const std::string& what) {
  std::fprintf(stderr, "bench_vulkan_matmul: %s\n", what.c_str());
  std::exit(1);
}

void check(const Status& s, const char* what) {
  if (!s) die(std::string(what) + ": " + s.message());
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = s.find(sep, start);
    out.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

std::vector<uint8_t> random_matrix(GgmlType type, int64_t rows, int64_t cols) {
  const int64_t rb = kernels::row_bytes(type, cols);
  std::vector<uint8_t> bytes(static_cast<size_t>(rows * rb));
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (float& v : row) v = normal(rng);
    if (!kernels::quantize_row(type, row.data(), bytes.data() + r * rb, cols)) die("cannot quantize this type");
  }
  return bytes;
}

std::unique_ptr<Buffer> buffer(Device& device, uint64_t bytes) {
  auto b = device.create_buffer(bytes, MemoryUse::Scratch);
  check(b.status(), "create_buffer");
  return std::move(*b);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// CPU seconds of the whole process (lavapipe's worker threads included): on a shared machine
// this measures the work better than wall clock.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Timing {
  int reps = 1;
  double wall = 0.0, cpu = 0.0;  // seconds of the last submission
};

// Records `record(reps)` into one submission and times it, doubling reps until the submission
// takes 0.3 s or reps reaches max_reps.
template <class Record>
Timing time_submissions(Recorder& recorder, int max_reps, Record record) {
  Timing t;
  for (;;) {
    check(recorder.begin(), "begin");
    record(t.reps);
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = cpu_seconds();
    check(recorder.submit_and_wait(), "submit");
    t.wall = seconds_since(t0);
    t.cpu = cpu_seconds() - c0;
    if (t.wall > 0.3 || t.reps >= max_reps) return t;
    t.reps *= 2;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> types = {"q4_0", "q8_0", "q4_K", "f16"};
  int64_t rows = 2048, cols = 768;
  bool mv = true, mm = true;
  MatmulOverrides overrides;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) die("missing value after " + a);
      return argv[++i];
    };
    if (a == "--types") {
      types = split(next(), ',');
    } else if (a == "--shape") {
      const auto p = split(next(), 'x');
      if (p.size() != 2) die("--shape ROWSxCOLS");
      rows = std::atoll(p[0].c_str());
      cols = std::atoll(p[1].c_str());
    } else if (a == "--mv-wg") {
      overrides.matvec_workgroup = static_cast<uint32_t>(std::atoi(next().c_str()));
    } else if (a == "--mv-rows") {
      overrides.matvec_rows = static_cast<uint32_t>(std::atoi(next().c_str()));
    } else if (a == "--mv-tokens") {
      overrides.matvec_tokens = static_cast<uint32_t>(std::atoi(next().c_str()));
    } else if (a == "--mm-tile") {
      const auto p = split(next(), ',');
      if (p.size() != 4) die("--mm-tile BM,BN,TM,TN");
      overrides.matmat_bm = static_cast<uint32_t>(std::atoi(p[0].c_str()));
      overrides.matmat_bn = static_cast<uint32_t>(std::atoi(p[1].c_str()));
      overrides.matmat_tm = static_cast<uint32_t>(std::atoi(p[2].c_str()));
      overrides.matmat_tn = static_cast<uint32_t>(std::atoi(p[3].c_str()));
    } else if (a == "--rowwise") {
      overrides.matvec_rowwise = std::atoi(next().c_str());
    } else if (a == "--int8") {
      overrides.int8_matvec = std::atoi(next().c_str());
    } else if (a == "--native") {
      set_int8_native_override(std::atoi(next().c_str()) != 0 ? -1 : 0);
    } else if (a == "--mv-only") {
      mm = false;
    } else if (a == "--mm-only") {
      mv = false;
    } else {
      die("unknown argument " + a + " (see the header of bench_vulkan_matmul.cpp)");
    }
  }

  DeviceOptions options;
  options.timestamps = false;
  auto created = Device::create(0, options);
  if (!created) die(created.message());
  Device& device = **created;
  std::printf("device: %s (%s, %s), subgroup %u\n", device.info().name.c_str(), device.info().type.c_str(),
              device.info().driver.c_str(), device.info().subgroup_size);
  Recorder recorder(device);

  for (const std::string& name : types) {
    const auto type = kernels::type_from_name(name.c_str());
    if (!type) die("unknown type " + name);
    const int64_t rb = kernels::row_bytes(*type, cols);
    const uint64_t matrix = static_cast<uint64_t>(rows * rb);
    const uint64_t stride = (matrix + 255) / 256 * 256;
    const int copies = static_cast<int>(std::clamp<uint64_t>((64ull << 20) / matrix, 1, 512));
    const auto host = random_matrix(*type, rows, cols);
    auto weights = buffer(device, stride * copies);
    for (int c = 0; c < copies; ++c) check(device.upload(*weights, c * stride, host.data(), matrix), "upload");
    const int64_t max_n = 512;
    std::vector<float> xh(static_cast<size_t>(max_n * cols));
    std::mt19937 rng(2);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (float& v : xh) v = normal(rng);
    auto x = buffer(device, xh.size() * 4);
    check(device.upload(*x, 0, xh.data(), xh.size() * 4), "upload x");
    auto y = buffer(device, static_cast<uint64_t>(max_n * rows) * 4);
    auto view = [&](int c) {
      return WeightView{*type, cols, rows, rb, BufferSpan{weights.get(), c * stride, (matrix + 3) / 4 * 4}, 0, 0, 1};
    };
    auto q8 = buffer(device, cols % 32 == 0 ? q8_activation_bytes(cols, max_n) : 4);
    // Records the quantization of x where the product takes it; returns the product's input.
    auto input = [&](int64_t n) {
      if (!matmul_takes_q8(device, *type, cols, n, false)) return MatmulInput(BufferSpan::whole(*x));
      check(record_quantize_q8(device, recorder, BufferSpan::whole(*x), n, cols, BufferSpan::whole(*q8)), "quantize");
      return MatmulInput(BufferSpan::whole(*x), BufferSpan::whole(*q8));
    };

    if (mv) {
      MatmulOverrides o = overrides;
      o.path = MatmulOverrides::Path::Matvec;
      set_matmul_overrides(o);
      for (int64_t n : {1, 2, 4, 8}) {
        // Warm-up (pipeline creation, timed), then enough passes over all copies for ~0.3 s.
        const auto w0 = std::chrono::steady_clock::now();
        check(recorder.begin(), "begin");
        check(record_matmul(device, recorder, view(0), input(n), n, BufferSpan::whole(*y), rows, 0), "matmul");
        check(recorder.submit_and_wait(), "submit");
        const double first = seconds_since(w0);
        const Timing tm = time_submissions(recorder, 64, [&](int passes) {
          const MatmulInput in = input(n);
          for (int p = 0; p < passes; ++p) {
            for (int c = 0; c < copies; ++c) {
              check(record_matmul(device, recorder, view(c), in, n, BufferSpan::whole(*y), rows, 0), "matmul");
            }
          }
        });
        const double t = tm.wall, cpu = tm.cpu;
        const double calls = static_cast<double>(tm.reps) * copies;
        std::printf("matvec %-5s %5lldx%-5lld n=%lld  %7.3f GB/s of weights  %8.1f us/call  %7.3f GB per CPU-second"
                    "  (first call %.0f ms)\n",
                    name.c_str(), static_cast<long long>(rows), static_cast<long long>(cols), static_cast<long long>(n),
                    calls * matrix / t * 1e-9, t / calls * 1e6, calls * matrix / cpu * 1e-9, first * 1e3);
      }
    }
    // Prefill: what record_matmul picks on its own (rowwise matvec on CPU drivers), then the
    // tiled matmat shader forced.
    for (int mode = 0; mode < 2 && mm; ++mode) {
      MatmulOverrides o = overrides;
      o.path = mode == 0 ? MatmulOverrides::Path::Auto : MatmulOverrides::Path::Matmat;
      set_matmul_overrides(o);
      const char* label = mode == 0 ? "auto  " : "matmat";
      for (int64_t n : {64, 128, 512}) {
        check(recorder.begin(), "begin");
        check(record_matmul(device, recorder, view(0), input(n), n, BufferSpan::whole(*y), rows, 0), "matmul");
        check(recorder.submit_and_wait(), "submit");
        const Timing tm = time_submissions(recorder, 256, [&](int reps) {
          const MatmulInput in = input(n);
          for (int r = 0; r < reps; ++r) {
            check(record_matmul(device, recorder, view(r % copies), in, n, BufferSpan::whole(*y), rows, 0), "matmul");
          }
        });
        const int reps = tm.reps;
        const double cpu = tm.cpu, per = tm.wall / reps;
        std::printf("%s %-5s %5lldx%-5lld n=%-4lld %10.3g rows*tokens/s  %7.2f GFLOP/s  %8.2f ms/call  %7.2f GFLOP per CPU-second\n",
                    label, name.c_str(), static_cast<long long>(rows), static_cast<long long>(cols), static_cast<long long>(n),
                    static_cast<double>(rows * n) / per, 2.0 * rows * cols * n / per * 1e-9, per * 1e3,
                    2.0 * rows * cols * n * reps / cpu * 1e-9);
      }
    }
    set_matmul_overrides({});
  }
  return 0;
}
