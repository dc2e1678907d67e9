// A Vulkan buffer with its own memory, tagged by what it holds so the metrics can report
// device memory by use. Buffers are created through Device::create_buffer.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>

namespace inferscope::vulkan {

enum class MemoryUse { Weights, Kv, Scratch, Staging, Count };

const char* memory_use_name(MemoryUse use);

class Device;

class Buffer {
 public:
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  VkBuffer handle() const { return buffer_; }
  uint64_t size() const { return size_; }
  MemoryUse use() const { return use_; }
  // Host pointer to the whole buffer when its memory is host-visible and coherent (staging
  // buffers always; device buffers on unified-memory devices such as lavapipe), else nullptr.
  void* mapped() const { return mapped_; }

 private:
  friend class Device;
  Buffer() = default;
  Device* device_ = nullptr;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  uint64_t size_ = 0;
  MemoryUse use_ = MemoryUse::Scratch;
  void* mapped_ = nullptr;
};

// A byte range of a buffer bound to one shader binding. offset must be a multiple of the
// device's minStorageBufferOffsetAlignment and size at most maxStorageBufferRange.
struct BufferSpan {
  const Buffer* buffer = nullptr;
  uint64_t offset = 0;
  uint64_t size = 0;  // 0: to the end of the buffer

  static BufferSpan whole(const Buffer& b) { return {&b, 0, b.size()}; }
  uint64_t bytes() const { return size ? size : buffer->size() - offset; }
};

}  // namespace inferscope::vulkan
