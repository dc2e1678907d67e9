// Records a sequence of compute dispatches into one command buffer and submits it once (one
// submission per forward pass). A memory barrier separates consecutive dispatches. With
// timestamps on, each dispatch is timed and its label kept, so profilers can show device
// time per op and per layer.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "engine/backend/vulkan/vk_buffer.h"
#include "engine/backend/vulkan/vk_device.h"
#include "engine/core/status.h"

namespace inferscope::vulkan {

// What a dispatch computes, for the profile: an op kind index (engine OpKind as int, or -1)
// and the layer (-1 outside layers).
struct DispatchLabel {
  int op = -1;
  int layer = -1;
};

struct DispatchTiming {
  DispatchLabel label;
  double seconds = 0.0;
};

class Recorder {
 public:
  explicit Recorder(Device& device);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Starts a new command buffer (waits for the previous submission if still running). With
  // `timed` and a device that has timestamps, each dispatch of this recording is timed.
  Status begin(bool timed = true);
  // Records kernel k over gx*gy*gz workgroups with `bindings` (one per kernel binding, in
  // order) and `push` (at most 128 bytes). A barrier before it orders it after earlier work.
  void dispatch(const Kernel& k, std::initializer_list<BufferSpan> bindings, const void* push, uint32_t push_bytes,
                uint32_t gx, uint32_t gy = 1, uint32_t gz = 1, DispatchLabel label = {});
  template <class Push>
  void dispatch(const Kernel& k, std::initializer_list<BufferSpan> bindings, const Push& push, uint32_t gx,
                uint32_t gy = 1, uint32_t gz = 1, DispatchLabel label = {}) {
    static_assert(sizeof(Push) <= 128, "push constants are limited to 128 bytes");
    dispatch(k, bindings, &push, static_cast<uint32_t>(sizeof(Push)), gx, gy, gz, label);
  }
  // Copies bytes between buffers (ordered after earlier dispatches).
  void copy(const BufferSpan& src, const BufferSpan& dst, uint64_t bytes);
  // Zeroes `bytes` bytes of dst from its offset (both multiples of 4), ordered after earlier work.
  void zero(const BufferSpan& dst, uint64_t bytes);
  // Copies byte ranges (VkBufferCopy: source offset, destination offset, size; whole buffers'
  // offsets) from src to dst in one vkCmdCopyBuffer, ordered after earlier work. With src == dst
  // no source range may overlap a destination range. Nothing for no regions.
  void copy_regions(const Buffer& src, const Buffer& dst, std::span<const VkBufferCopy> regions);
  // Ends, submits and waits. Records the first recording error, if any, as the result.
  Status submit_and_wait();
  // Ends the recording without running it (after a warm-up recording that only builds the
  // pipelines); returns the first recording error.
  Status discard();

  uint32_t dispatches() const { return dispatches_; }          // in the last recording
  uint64_t submissions() const { return submissions_; }        // in this recorder's life
  const std::vector<DispatchTiming>& timings() const { return timings_; }  // of the last submission

 private:
  VkDescriptorSet allocate_set(const Kernel& k);
  void barrier();

  Device& device_;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  bool pending_ = false;  // submitted, not yet waited for
  std::vector<VkDescriptorPool> pools_;
  size_t pool_in_use_ = 0;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  uint32_t query_capacity_ = 0;
  bool timed_ = false;  // this recording writes timestamps
  uint32_t dispatches_ = 0;
  uint64_t submissions_ = 0;
  std::vector<DispatchLabel> labels_;
  std::vector<DispatchTiming> timings_;
  Status error_ = Status::ok();
};

}  // namespace inferscope::vulkan
