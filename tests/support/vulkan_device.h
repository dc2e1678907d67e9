// The Vulkan device the tests run on: the first one the loader lists (lavapipe in CI), or a
// skip with a visible message where the machine has none. Only for tests/vulkan.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "engine/backend/backend_registry.h"
#include "engine/backend/vulkan/vk_device.h"

namespace inferscope::testing {

// Creates device 0 with `options`; on failure sets *why and returns nullptr.
inline std::unique_ptr<vulkan::Device> open_test_device(const vulkan::DeviceOptions& options, std::string* why) {
  auto device = vulkan::Device::create(0, options);
  if (!device) {
    *why = device.message();
    return nullptr;
  }
  return std::move(*device);
}

}  // namespace inferscope::testing

// In a test body: declares `device` (std::unique_ptr<vulkan::Device>) or skips the test.
#define INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, options)                                  \
  std::string device##_why;                                                                \
  auto device = ::inferscope::testing::open_test_device(options, &device##_why);           \
  if (!device) GTEST_SKIP() << "no Vulkan device: " << device##_why

// In a test body: skips the test where the Vulkan backend lists no device (its plugin or the
// driver missing), naming why.
#define INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND()                                                    \
  do {                                                                                             \
    const ::inferscope::BackendDevices vulkan_devices = ::inferscope::list_backend_devices("vulkan"); \
    if (!vulkan_devices.unavailable_reason.empty()) {                                              \
      GTEST_SKIP() << "no Vulkan device: " << vulkan_devices.unavailable_reason;                   \
    }                                                                                              \
  } while (0)
