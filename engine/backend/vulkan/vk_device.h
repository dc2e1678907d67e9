// One logical Vulkan device with its compute queue: buffers (tagged by use), compute kernels
// built from the embedded SPIR-V, and host<->device copies. Not thread-safe: one engine
// thread drives a device.
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/backend/vulkan/vk_buffer.h"
#include "engine/backend/vulkan/vk_instance.h"
#include "engine/core/status.h"

namespace inferscope::vulkan {

struct DeviceOptions {
  bool validation = false;  // VK_LAYER_KHRONOS_validation (also: INFERSCOPE_VULKAN_VALIDATION=1)
  // Caps maxStorageBufferRange below the device's (tests the splitting of large tensors).
  uint64_t max_storage_buffer_range = 0;
  // Caps the size of one memory allocation below maxMemoryAllocationSize.
  uint64_t max_allocation_size = 0;
  // Caps the device memory the fit check assumes (tests a model that does not fit).
  uint64_t memory_bytes = 0;
  bool timestamps = true;  // per-dispatch timestamp queries when the device has them
  // false: only staging buffers are mapped, even where device memory is host-visible (tests the
  // staging paths a discrete GPU takes: uploads, downloads, the block table).
  bool map_device_buffers = true;
};

// A compute pipeline: shader `name` from the embedded set, with n_bindings storage buffers
// (set 0, bindings 0..n-1), push constants of up to 128 bytes and specialization constants
// 0..k-1 (constant 0 is the workgroup size by convention).
struct Kernel {
  std::string name;
  uint32_t n_bindings = 0;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
};

class Device {
 public:
  static Result<std::unique_ptr<Device>> create(uint32_t index, const DeviceOptions& options = {});
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceInfo& info() const { return info_; }
  const DeviceOptions& options() const { return options_; }
  // Effective limits (the device's, or lower when the options cap them).
  uint64_t max_storage_buffer_range() const { return max_range_; }
  uint64_t max_allocation_size() const { return max_alloc_; }
  bool timestamps() const { return timestamps_; }

  // A buffer usable as a storage buffer and as a transfer source and destination. Fails with
  // a clear message on out-of-device-memory or above the allocation limit.
  Result<std::unique_ptr<Buffer>> create_buffer(uint64_t bytes, MemoryUse use);
  // Copies host data into / out of a buffer (directly when mapped, else through a staging
  // buffer and one submission). Waits for completion.
  Status upload(const Buffer& dst, uint64_t offset, const void* data, uint64_t bytes);
  Status download(const Buffer& src, uint64_t offset, void* data, uint64_t bytes);

  // The pipeline for shader `name`, built once per spec-constant set and cached.
  Result<const Kernel*> kernel(std::string_view name, uint32_t n_bindings, std::span<const uint32_t> spec = {});
  bool has_shader(std::string_view name) const;

  // A read-only table of words the shaders read (the i-quant grids), made by `make` and uploaded
  // on the first call with that name, kept for the device's life (its memory counted as
  // weights).
  Result<const Buffer*> constant_table(const std::string& name, const std::function<std::vector<uint32_t>()>& make);

  // Bytes currently allocated per use.
  uint64_t allocated_bytes(MemoryUse use) const { return allocated_[static_cast<size_t>(use)]; }

  // Raw handles for the recorder.
  VkDevice handle() const { return device_; }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return queue_family_; }
  VkCommandPool command_pool() const { return command_pool_; }
  // Sets device_lost after VK_ERROR_DEVICE_LOST; every later call then fails fast.
  bool lost() const { return lost_; }
  Status note_result(VkResult result, const char* what);

 private:
  friend class Buffer;
  Device() = default;
  Status init_device(uint32_t index);
  Result<uint32_t> memory_type(uint32_t type_bits, bool host_visible) const;
  void release(Buffer& buffer);
  Status copy_via_staging(const Buffer& device_buffer, uint64_t offset, void* host, uint64_t bytes, bool to_device);

  std::shared_ptr<Instance> instance_;
  DeviceOptions options_;
  DeviceInfo info_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory_props_{};
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
  uint64_t max_range_ = 0, max_alloc_ = 0;
  bool timestamps_ = false;
  bool lost_ = false;
  std::array<uint64_t, static_cast<size_t>(MemoryUse::Count)> allocated_{};
  std::map<std::string, std::unique_ptr<Kernel>> kernels_;  // key: name + spec constants
  std::map<std::string, std::unique_ptr<Buffer>> tables_;   // constant_table's, by name
};

}  // namespace inferscope::vulkan
