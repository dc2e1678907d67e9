#include "engine/backend/vulkan/ops/vk_op_util.h"

#include <algorithm>
#include <string>

namespace inferscope::vulkan {

namespace {

uint32_t g_workgroup_override = 0;

uint32_t floor_pow2(uint32_t v) {
  uint32_t p = 1;
  while (p * 2 <= v && p < (1u << 31)) p *= 2;
  return p;
}

}  // namespace

uint32_t op_workgroup_size(const Device& device, uint32_t preferred) {
  const uint32_t wanted = g_workgroup_override ? g_workgroup_override : preferred;
  const uint32_t device_max = floor_pow2(std::max<uint32_t>(device.info().max_workgroup_invocations, 8));
  return std::max<uint32_t>(8, std::min(floor_pow2(std::max<uint32_t>(wanted, 1)), device_max));
}

void set_op_workgroup_override(uint32_t size) { g_workgroup_override = size; }

uint32_t op_group_count(const Device& device, uint64_t items, uint64_t per_group) {
  const uint64_t groups = (items + per_group - 1) / per_group;
  const uint64_t limit = std::max<uint32_t>(device.info().max_workgroup_count[0], 1);
  return static_cast<uint32_t>(std::clamp<uint64_t>(groups, 1, limit));
}

Status check_span(const Device& device, const BufferSpan& span, uint64_t bytes, std::string_view op,
                  std::string_view what) {
  const std::string where = std::string(op) + ": " + std::string(what);
  if (!span.buffer) return Status::error(where + " has no buffer");
  const uint64_t align = std::max<uint64_t>(device.info().min_storage_buffer_offset_alignment, 1);
  if (span.offset % align != 0) {
    return Status::error(where + " starts at byte " + std::to_string(span.offset) +
                         ", not a multiple of minStorageBufferOffsetAlignment (" + std::to_string(align) + ")");
  }
  if (span.offset > span.buffer->size() || span.bytes() > span.buffer->size() - span.offset) {
    return Status::error(where + " extends past the end of its buffer");
  }
  if (span.bytes() < bytes) {
    return Status::error(where + " holds " + std::to_string(span.bytes()) + " bytes, " + std::to_string(bytes) +
                         " needed");
  }
  if (bytes > device.max_storage_buffer_range()) {
    return Status::error(where + " needs " + std::to_string(bytes) + " bytes in one binding, above maxStorageBufferRange (" +
                         std::to_string(device.max_storage_buffer_range()) + ")");
  }
  return Status::ok();
}

Result<BoundSpan> bind_words(const Device& device, const BufferSpan& span, uint64_t words, std::string_view op,
                             std::string_view what) {
  const std::string where = std::string(op) + ": " + std::string(what);
  if (!span.buffer) return Status::error(where + " has no buffer");
  if (span.offset % 4 != 0) {
    return Status::error(where + " starts at byte " + std::to_string(span.offset) + ", not a multiple of 4");
  }
  if (span.offset > span.buffer->size() || span.bytes() > span.buffer->size() - span.offset) {
    return Status::error(where + " extends past the end of its buffer");
  }
  if (span.bytes() < words * 4) {
    return Status::error(where + " holds " + std::to_string(span.bytes()) + " bytes, " + std::to_string(words * 4) +
                         " needed");
  }
  const uint64_t align = std::max<uint64_t>(device.info().min_storage_buffer_offset_alignment, 4);
  const uint64_t start = span.offset / align * align;
  BoundSpan b;
  b.span = {span.buffer, start, span.offset - start + words * 4};
  b.first = static_cast<uint32_t>((span.offset - start) / 4);
  INFERSCOPE_RETURN_IF_ERROR(check_u32(b.first + words, op, std::string(what) + " elements"));
  INFERSCOPE_RETURN_IF_ERROR(check_span(device, b.span, b.span.size, op, what));
  return b;
}

BufferSpan first_bytes(const BufferSpan& span, uint64_t bytes) { return {span.buffer, span.offset, bytes}; }

Status check_u32(int64_t value, std::string_view op, std::string_view what) {
  if (value < 0) return Status::error(std::string(op) + ": " + std::string(what) + " is negative");
  return check_u32(static_cast<uint64_t>(value), op, what);
}

Status check_u32(uint64_t value, std::string_view op, std::string_view what) {
  if (value > 0xFFFFFFFFull) {
    return Status::error(std::string(op) + ": " + std::string(what) + " = " + std::to_string(value) +
                         " does not fit the shaders' 32-bit indices");
  }
  return Status::ok();
}

}  // namespace inferscope::vulkan
