#include "engine/backend/vulkan/vk_buffer.h"

#include "engine/backend/vulkan/vk_device.h"

namespace inferscope::vulkan {

const char* memory_use_name(MemoryUse use) {
  constexpr const char* kNames[] = {"weights", "kv-cache", "scratch", "staging"};
  return kNames[static_cast<int>(use)];
}

Buffer::~Buffer() {
  if (device_) device_->release(*this);
}

}  // namespace inferscope::vulkan
