// The Vulkan instance and the physical devices it sees. A missing loader, a missing driver or
// no compute-capable device are errors (Status), never crashes.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/status.h"

namespace inferscope::vulkan {

// What `inspect --backend vulkan` and the app's device picker show, and what the kernels
// are configured from (subgroup size, storage features, limits).
struct DeviceInfo {
  uint32_t index = 0;  // --device N
  std::string name;
  std::string type;    // "discrete GPU", "integrated GPU", "CPU", ...
  std::string driver;  // driver name and version
  std::string api_version;
  uint64_t memory_bytes = 0;  // largest device-local heap
  uint32_t subgroup_size = 0;
  bool subgroup_broadcast = false;  // subgroupBroadcast in compute shaders (ballot operations)
  uint64_t max_storage_buffer_range = 0;
  uint64_t max_allocation_size = 0;
  uint32_t max_shared_memory = 0;
  uint32_t max_workgroup_invocations = 0;
  uint32_t max_workgroup_count[3] = {0, 0, 0};
  uint64_t min_storage_buffer_offset_alignment = 0;
  bool storage_16bit = false;   // storageBuffer16BitAccess
  bool storage_8bit = false;    // storageBuffer8BitAccess
  bool shader_int8 = false;
  // shaderIntegerDotProduct (VK_KHR_shader_integer_dot_product): the int8 matvec uses OpSDot /
  // OpSUDot; `accelerated` when the driver says the packed 4x8-bit forms run as one instruction.
  bool integer_dot_product = false;
  bool integer_dot_product_accelerated = false;
  bool shader_float16 = false;
  bool timestamps = false;      // timestamp queries on the compute queue
  double timestamp_period_ns = 0.0;

  // A CPU driver (lavapipe, SwiftShader): a workgroup runs on one CPU thread, a subgroup is one
  // SIMD register, every buffer read whose address varies per invocation is a scalar loop over
  // the lanes, and barriers switch between the workgroup's SIMD slices.
  bool is_cpu() const { return type == "CPU"; }
};

class Instance {
 public:
  // validation: enable VK_LAYER_KHRONOS_validation when installed (errors go to stderr).
  static Result<std::shared_ptr<Instance>> create(bool validation = false);
  ~Instance();

  VkInstance handle() const { return instance_; }
  // The usable devices (Vulkan 1.2 or later), in the loader's order; index = DeviceInfo::index.
  const std::vector<VkPhysicalDevice>& physical_devices() const { return usable_; }
  const std::vector<DeviceInfo>& devices() const { return infos_; }
  bool validation_enabled() const { return validation_; }

 private:
  Instance() = default;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  bool validation_ = false;
  std::vector<VkPhysicalDevice> physical_;
  std::vector<VkPhysicalDevice> usable_;
  std::vector<DeviceInfo> infos_;
};

// "VK_ERROR_OUT_OF_DEVICE_MEMORY" etc.
const char* vk_result_name(VkResult result);

}  // namespace inferscope::vulkan

// Returns a Status error naming the call and the VkResult when `call` does not succeed.
#define INFERSCOPE_VK_CHECK(call)                                                                   \
  do {                                                                                             \
    VkResult _vr = (call);                                                                         \
    if (_vr != VK_SUCCESS) {                                                                       \
      return ::inferscope::Status::error(std::string(#call).substr(0, std::string(#call).find('(')) + \
                                         " failed: " + ::inferscope::vulkan::vk_result_name(_vr)); \
    }                                                                                              \
  } while (0)
