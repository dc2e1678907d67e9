// The CUDA backend without a GPU (CI) and with one: the plug-in loads through the registry and
// lists devices or says why there are none (no driver, no GPU), in the words the CLI prints;
// CUDA and cuBLAS errors name the call; a model is refused with the reason, never a crash.
#include <gtest/gtest.h>

#include "engine/backend/backend_registry.h"
#include "engine/backend/cuda/cuda_devices.h"
#include "engine/backend/cuda/cuda_error.h"
#include "engine/runtime/session.h"
#include "tests/support/cli_runner.h"
#include "tests/support/test_models.h"

namespace inferscope::cuda {
namespace {

// The reasons a machine without a usable NVIDIA GPU gives.
bool is_no_device_reason(const std::string& reason) {
  return reason.find("no NVIDIA driver (cudaErrorInsufficientDriver)") != std::string::npos ||
         reason.find("no NVIDIA GPU (cudaErrorNoDevice)") != std::string::npos ||
         reason.find("(cudaError") != std::string::npos;
}

TEST(CudaBackend, LoadsThroughTheRegistryAndListsDevicesOrSaysWhy) {
  EXPECT_TRUE(is_backend_name("cuda"));
  EXPECT_EQ(backend_label("cuda"), "CUDA");
  auto plugin = load_backend("cuda");
  ASSERT_TRUE(plugin) << plugin.message();
  EXPECT_STREQ((*plugin)->name(), "cuda");
  auto devices = (*plugin)->devices();
  const BackendDevices listed = list_backend_devices("cuda");
  if (!devices) {
    std::printf("[ no CUDA device here: %s ]\n", devices.message().c_str());
    EXPECT_TRUE(is_no_device_reason(devices.message())) << devices.message();
    EXPECT_EQ(listed.unavailable_reason, devices.message());
    return;
  }
  ASSERT_FALSE(devices->empty());
  EXPECT_EQ(listed.devices.size(), devices->size());
  for (const BackendDevice& d : *devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.memory_bytes, 0u);
    EXPECT_EQ(d.properties.at(1).first, "compute capability");
  }
}

TEST(CudaBackend, InspectDevicesPrintsTheDevicesOrWhyThereAreNone) {
  const auto run = testing::run_cli("inspect --devices");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  auto devices = list_devices();
  const std::string expected = devices ? "cuda device 0: " + devices->front().name
                                       : "cuda: no devices (" + devices.message() + ")";
  EXPECT_NE(run.out.find(expected), std::string::npos) << run.out;
}

// Through the registry, as the CLI and the app open it: without a device the session is
// refused with the reason, not a crash; with one it answers.
TEST(CudaBackend, ASessionRunsOrIsRefusedWithTheReason) {
  auto model = testing::load_test_model("stories260K.gguf");
  ASSERT_TRUE(model);
  SessionOptions options;
  options.backend.backend = "cuda";
  auto session = Session::create(model, options);
  auto devices = list_devices();
  if (!devices) {
    ASSERT_FALSE(session);
    EXPECT_NE(session.message().find(devices.message()), std::string::npos) << session.message();
    return;
  }
  ASSERT_TRUE(session) << session.message();
  GenerateRequest req;
  req.prompt = "Once upon a time";
  req.max_tokens = 8;
  req.sampling.temperature = 0.0f;
  auto reply = (*session)->generate(req);
  ASSERT_TRUE(reply) << reply.message();
  EXPECT_EQ(reply->token_ids.size(), 8u);
}

TEST(CudaErrors, NameTheCallAndTheError) {
  EXPECT_TRUE(cuda_status(cudaSuccess, "cudaMalloc"));
  const Status oom = cuda_status(cudaErrorMemoryAllocation, "cudaMalloc(KV cache, 512 MiB)");
  EXPECT_EQ(oom.message(), "cudaMalloc(KV cache, 512 MiB): out of memory (cudaErrorMemoryAllocation)");
  EXPECT_TRUE(cublas_status(CUBLAS_STATUS_SUCCESS, "cublasGemmEx"));
  const Status blas = cublas_status(CUBLAS_STATUS_NOT_SUPPORTED, "cublasGemmEx");
  EXPECT_EQ(blas.message().rfind("cublasGemmEx: CUBLAS_STATUS_NOT_SUPPORTED", 0), 0u) << blas.message();
  EXPECT_EQ(no_device_reason(cudaErrorInsufficientDriver), "no NVIDIA driver (cudaErrorInsufficientDriver)");
  EXPECT_EQ(no_device_reason(cudaErrorNoDevice), "no NVIDIA GPU (cudaErrorNoDevice)");
  EXPECT_EQ(no_device_reason(cudaErrorDevicesUnavailable).find("(cudaErrorDevicesUnavailable)") != std::string::npos,
            true);
}

TEST(CudaDevices, VersionsReadAsMajorDotMinor) {
  EXPECT_EQ(cuda_version_text(13000), "13.0");
  EXPECT_EQ(cuda_version_text(12040), "12.4");
  EXPECT_EQ(cuda_version_text(11080), "11.8");
}

}  // namespace
}  // namespace inferscope::cuda
