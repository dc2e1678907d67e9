#include "engine/backend/vulkan/ops/vk_quantize.h"

#include <string>

#include "engine/backend/vulkan/ops/vk_op_util.h"

namespace inferscope::vulkan {

namespace {

// Mirrors the push constants of quantize_q8.comp.
struct QuantizePush {
  uint32_t n_tokens, cols, x_stride, x_off;
};

int g_native_override = -1;

}  // namespace

uint64_t q8_row_words(int64_t cols) {
  const auto c = static_cast<uint64_t>(cols);
  return (c / 4 + c / 32 + 3) / 4 * 4;
}

uint64_t q8_activation_bytes(int64_t cols, int64_t n) { return q8_row_words(cols) * static_cast<uint64_t>(n) * 4; }

bool int8_native_variant(const Device& device) {
  return device.info().integer_dot_product && device.info().storage_16bit && g_native_override != 0;
}

void set_int8_native_override(int native) { g_native_override = native; }

Status record_quantize_q8(Device& device, Recorder& recorder, BufferSpan x, int64_t n, int64_t cols, BufferSpan out,
                          DispatchLabel label) {
  constexpr const char* kOp = "quantize_q8";
  if (n < 0) return Status::error("quantize_q8: negative row count");
  if (cols <= 0 || cols % 32 != 0) {
    return Status::error("quantize_q8: cols = " + std::to_string(cols) + ", expected a positive multiple of 32");
  }
  if (n == 0) return Status::ok();
  INFERSCOPE_RETURN_IF_ERROR(check_u32(n * cols, kOp, "n * cols"));
  const uint64_t out_bytes = q8_activation_bytes(cols, n);
  INFERSCOPE_RETURN_IF_ERROR(check_u32(out_bytes, kOp, "out bytes"));
  INFERSCOPE_BIND_WORDS(xb, device, x, static_cast<uint64_t>(n * cols), kOp, "x");
  if (xb.first % 4 != 0) return Status::error("quantize_q8: x must start at a multiple of 16 bytes");
  INFERSCOPE_RETURN_IF_ERROR(check_span(device, out, out_bytes, kOp, "out"));
  const uint32_t spec[] = {op_workgroup_size(device, 64)};
  auto kernel = device.kernel(int8_native_variant(device) ? "quantize_q8_native" : "quantize_q8", 2, spec);
  if (!kernel) return kernel.status();
  const uint64_t blocks = static_cast<uint64_t>(n * cols / 32);
  const QuantizePush push{static_cast<uint32_t>(n), static_cast<uint32_t>(cols), static_cast<uint32_t>(cols), xb.first};
  recorder.dispatch(**kernel, {xb.span, first_bytes(out, out_bytes)}, push, op_group_count(device, blocks, spec[0]),
                    1, 1, label);
  return Status::ok();
}

}  // namespace inferscope::vulkan
