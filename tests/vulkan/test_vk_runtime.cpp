// The Vulkan runtime itself: device listing, buffers, uploads, limits and clean errors.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "engine/backend/vulkan/vk_device.h"
#include "engine/backend/vulkan/vk_recorder.h"
#include "tests/support/vulkan_device.h"

namespace inferscope::vulkan {
namespace {

TEST(VulkanRuntime, ListsDevicesWithLimits) {
  auto instance = Instance::create();
  if (!instance || (*instance)->devices().empty()) GTEST_SKIP() << "no Vulkan device";
  for (const DeviceInfo& d : (*instance)->devices()) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GE(d.subgroup_size, 1u);
    EXPECT_GT(d.max_storage_buffer_range, 0u);
    EXPECT_GT(d.max_workgroup_invocations, 0u);
  }
}

TEST(VulkanRuntime, UploadDownloadRoundTrip) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  std::vector<uint8_t> data(1000);
  std::iota(data.begin(), data.end(), 0);
  auto buffer = device->create_buffer(data.size(), MemoryUse::Scratch);
  ASSERT_TRUE(buffer) << buffer.message();
  EXPECT_EQ(device->allocated_bytes(MemoryUse::Scratch), (*buffer)->size());
  ASSERT_TRUE(device->upload(**buffer, 0, data.data(), data.size()));
  std::vector<uint8_t> back(data.size());
  ASSERT_TRUE(device->download(**buffer, 0, back.data(), back.size()));
  EXPECT_EQ(back, data);
  buffer->reset();
  EXPECT_EQ(device->allocated_bytes(MemoryUse::Scratch), 0u);
}

TEST(VulkanRuntime, AllocationAboveTheLimitIsAClearError) {
  DeviceOptions options;
  options.max_allocation_size = 1 << 20;
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, options);
  auto buffer = device->create_buffer(2 << 20, MemoryUse::Weights);
  ASSERT_FALSE(buffer);
  EXPECT_NE(buffer.message().find("allocation limit"), std::string::npos) << buffer.message();
}

TEST(VulkanRuntime, MissingDeviceIndexIsAnError) {
  auto device = Device::create(1000);
  ASSERT_FALSE(device);
  EXPECT_FALSE(device.message().empty());
}

TEST(VulkanRuntime, UnknownShaderIsAnError) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  auto k = device->kernel("no_such_shader", 1);
  ASSERT_FALSE(k);
  EXPECT_NE(k.message().find("no_such_shader"), std::string::npos);
}

}  // namespace
}  // namespace inferscope::vulkan

namespace inferscope::vulkan {
namespace {

// The validation run (INFERSCOPE_VULKAN_VALIDATION=1 ctest -R vulkan) relies on the layer being
// found where the package is installed.
TEST(VulkanRuntime, ValidationLayerCanBeEnabled) {
  auto instance = Instance::create(true);
  if (!instance) GTEST_SKIP() << "no Vulkan loader: " << instance.message();
  EXPECT_TRUE((*instance)->validation_enabled()) << "VK_LAYER_KHRONOS_validation is not installed";
}

}  // namespace
}  // namespace inferscope::vulkan
