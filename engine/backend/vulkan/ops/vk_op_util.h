// Helpers shared by the op wrappers of engine/backend/vulkan/ops: workgroup sizes, dispatch
// grids, and the checks every wrapper makes on its buffer spans before recording.
#pragma once

#include <cstdint>
#include <string_view>

#include "engine/backend/vulkan/vk_buffer.h"
#include "engine/backend/vulkan/vk_device.h"
#include "engine/core/status.h"

namespace inferscope::vulkan {

// The workgroup size an op records with: `preferred` (a power of two), or the forced size when
// set_op_workgroup_override is active, capped at the device's maxComputeWorkGroupInvocations
// (rounded down to a power of two) and at least 8.
uint32_t op_workgroup_size(const Device& device, uint32_t preferred);

// For tests: every op records with this workgroup size (a power of two 8..1024) until reset
// with 0. Not thread-safe; the shaders must give the same results at every size.
void set_op_workgroup_override(uint32_t size);

// Workgroups along x for a grid-stride loop over `items` with `per_group` items per workgroup
// per step: at least 1, at most maxComputeWorkGroupCount[0].
uint32_t op_group_count(const Device& device, uint64_t items, uint64_t per_group);

// OK when `span` has a buffer, an offset that is a multiple of minStorageBufferOffsetAlignment,
// at least `bytes` bytes, and at most maxStorageBufferRange bytes bound; else an error naming
// the op and the operand.
Status check_span(const Device& device, const BufferSpan& span, uint64_t bytes, std::string_view op,
                  std::string_view what);

// The span cut to exactly `bytes` bytes (so large buffers bind only what the op reads).
BufferSpan first_bytes(const BufferSpan& span, uint64_t bytes);

// An operand of `words` 32-bit elements (F32, int32, packed F16 pairs) as a binding that
// starts at an allowed offset at or before it, and the index of its first element in that
// binding (shaders add it to every index). So operands may start at any multiple of 4 bytes:
// rows in the middle of a batch, the up half of a fused gate|up row.
struct BoundSpan {
  BufferSpan span;
  uint32_t first = 0;
};
Result<BoundSpan> bind_words(const Device& device, const BufferSpan& span, uint64_t words, std::string_view op,
                             std::string_view what);

// OK when 0 <= value < 2^32 (shaders index with 32-bit integers); else an error naming it.
Status check_u32(int64_t value, std::string_view op, std::string_view what);
Status check_u32(uint64_t value, std::string_view op, std::string_view what);

}  // namespace inferscope::vulkan

// Declares `var` (a BoundSpan) from bind_words(args...) or returns bind_words' error.
#define INFERSCOPE_BIND_WORDS(var, ...)                                 \
  auto var##_bound = ::inferscope::vulkan::bind_words(__VA_ARGS__);     \
  if (!var##_bound) return var##_bound.status();                        \
  const ::inferscope::vulkan::BoundSpan var = *var##_bound
