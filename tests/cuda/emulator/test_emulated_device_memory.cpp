// The CUDA backend under the emulator's device limits (kernels/cuda/emulator: the emulated
// device's capacity is settable, a real one's is not): a failed allocation names itself and what
// the device holds, and a model that does not fit is refused before anything is uploaded.
#include <gtest/gtest.h>

#include "engine/backend/cuda/cuda_memory.h"
#include "tests/cuda/ops/backend_setup.h"
#include "tests/support/testdata.h"

namespace inferscope::cuda_test {
namespace {

TEST(CudaMemory, AFailedAllocationNamesItselfAndWhatTheDeviceHolds) {
  cuda::DeviceMemory memory;
  cuda_emulator::set_device_memory(std::size_t{8} << 20);
  {
    auto weights = memory.allocate(std::size_t{6} << 20, cuda::MemoryUse::Weights, "token_embd.weight");
    ASSERT_TRUE(weights) << weights.message();
    auto kv = memory.allocate(std::size_t{4} << 20, cuda::MemoryUse::Kv, "K cache of layer 0");
    ASSERT_FALSE(kv);
    EXPECT_NE(kv.message().find("cudaMalloc(K cache of layer 0, 4 MiB): out of memory (cudaErrorMemoryAllocation)"),
              std::string::npos)
        << kv.message();
    EXPECT_NE(kv.message().find("weights 6 MiB"), std::string::npos) << kv.message();
    EXPECT_EQ(memory.in_use(cuda::MemoryUse::Weights), std::size_t{6} << 20);
  }
  EXPECT_EQ(memory.in_use(cuda::MemoryUse::Weights), 0u);
  cuda_emulator::set_device_memory(std::size_t{16} << 30);
}

TEST(CudaModel, AModelThatDoesNotFitIsRefusedBeforeAnyUpload) {
  auto loaded = Model::load(testing::testdata("quant/q8_0.gguf"));
  ASSERT_TRUE(loaded) << loaded.message();
  const std::shared_ptr<const Model> model = *loaded;
  cuda_emulator::set_device_memory(std::size_t{1} << 20);
  auto fp = cuda_forward(model);
  cuda_emulator::set_device_memory(std::size_t{16} << 30);
  ASSERT_FALSE(fp);
  EXPECT_NE(fp.message().find("needs"), std::string::npos) << fp.message();
  EXPECT_EQ(cuda_emulator::device_memory_in_use(), 0u);
}

}  // namespace
}  // namespace inferscope::cuda_test
