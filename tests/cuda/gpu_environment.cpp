// The op tests built over CUDA itself (test_cuda_*_gpu): without a device every test is
// skipped, and the skip says why (the reason the backend gives: no driver, no GPU...). The
// "[  SKIPPED ]" line is for ctest (SKIP_REGULAR_EXPRESSION), since GoogleTest 1.12 counts tests
// skipped by an environment as passed.
#include <gtest/gtest.h>

#include <cstdio>

#include "engine/backend/cuda/cuda_devices.h"

namespace inferscope::cuda_test {
namespace {

class NeedsACudaDevice : public ::testing::Environment {
 public:
  void SetUp() override {
    auto devices = cuda::list_devices();
    if (devices) return;
    std::printf("[  SKIPPED ] no CUDA device: %s\n", devices.message().c_str());
    GTEST_SKIP() << "no CUDA device: " << devices.message();
  }
};

const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new NeedsACudaDevice);

}  // namespace
}  // namespace inferscope::cuda_test
