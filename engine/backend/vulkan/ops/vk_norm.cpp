#include "engine/backend/vulkan/ops/vk_norm.h"

#include "engine/backend/vulkan/ops/vk_op_util.h"
#include "engine/backend/vulkan/ops/vk_quantize.h"

namespace inferscope::vulkan {

namespace {

struct RmsNormPush {
  uint32_t n_rows;
  uint32_t n;
  float eps;
  uint32_t x_off, w_off, y_off;
};

struct LayerNormPush {
  uint32_t n_rows;
  uint32_t n;
  float eps;
  uint32_t x_off, w_off, b_off, y_off;
};

// One workgroup per row: small on CPU drivers (fewer slices to switch between at the barriers).
uint32_t norm_workgroup(Device& device) { return op_workgroup_size(device, device.info().is_cpu() ? 64 : 256); }

}  // namespace

Status record_layer_norm(Device& device, Recorder& recorder, BufferSpan x, BufferSpan w, BufferSpan b, BufferSpan y,
                         int64_t n_rows, int64_t n, float eps, DispatchLabel label) {
  constexpr const char* kOp = "layer_norm";
  if (n_rows < 0 || n < 0) return Status::error("layer_norm: negative size");
  if (n_rows == 0 || n == 0) return Status::ok();
  INFERSCOPE_RETURN_IF_ERROR(check_u32(n_rows * n, kOp, "n_rows * n"));
  const uint64_t elements = static_cast<uint64_t>(n_rows * n);
  INFERSCOPE_BIND_WORDS(xb, device, x, elements, kOp, "x");
  INFERSCOPE_BIND_WORDS(wb, device, w, static_cast<uint64_t>(n), kOp, "w");
  INFERSCOPE_BIND_WORDS(bb, device, b, static_cast<uint64_t>(n), kOp, "b");
  INFERSCOPE_BIND_WORDS(yb, device, y, elements, kOp, "y");
  const uint32_t spec[] = {norm_workgroup(device)};
  const LayerNormPush push{static_cast<uint32_t>(n_rows), static_cast<uint32_t>(n), eps, xb.first, wb.first,
                           bb.first, yb.first};
  auto kernel = device.kernel("layer_norm", 4, spec);
  if (!kernel) return kernel.status();
  recorder.dispatch(**kernel, {xb.span, wb.span, bb.span, yb.span}, push,
                    op_group_count(device, static_cast<uint64_t>(n_rows), 1), 1, 1, label);
  return Status::ok();
}

Status record_rms_norm(Device& device, Recorder& recorder, BufferSpan x, BufferSpan w, BufferSpan y, int64_t n_rows,
                       int64_t n, float eps, DispatchLabel label, BufferSpan q8) {
  constexpr const char* kOp = "rms_norm";
  if (n_rows < 0 || n < 0) return Status::error("rms_norm: negative size");
  if (n_rows == 0 || n == 0) return Status::ok();
  INFERSCOPE_RETURN_IF_ERROR(check_u32(n_rows * n, kOp, "n_rows * n"));
  const uint64_t elements = static_cast<uint64_t>(n_rows * n);
  INFERSCOPE_BIND_WORDS(xb, device, x, elements, kOp, "x");
  INFERSCOPE_BIND_WORDS(wb, device, w, static_cast<uint64_t>(n), kOp, "w");
  INFERSCOPE_BIND_WORDS(yb, device, y, elements, kOp, "y");
  // A row of a few thousand floats: a few elements per invocation.
  const uint32_t wg = norm_workgroup(device);
  const uint32_t spec[] = {wg};
  const RmsNormPush push{static_cast<uint32_t>(n_rows), static_cast<uint32_t>(n), eps, xb.first, wb.first, yb.first};
  const uint32_t groups = op_group_count(device, static_cast<uint64_t>(n_rows), 1);
  if (!q8.buffer) {
    auto kernel = device.kernel("rms_norm", 3, spec);
    if (!kernel) return kernel.status();
    recorder.dispatch(**kernel, {xb.span, wb.span, yb.span}, push, groups, 1, 1, label);
    return Status::ok();
  }
  if (n % 32 != 0) return Status::error("rms_norm: quantized output needs rows of a multiple of 32 values");
  const uint64_t q8_bytes = q8_activation_bytes(n, n_rows);
  INFERSCOPE_RETURN_IF_ERROR(check_u32(q8_bytes, kOp, "q8 bytes"));
  INFERSCOPE_RETURN_IF_ERROR(check_span(device, q8, q8_bytes, kOp, "q8"));
  auto kernel = device.kernel(int8_native_variant(device) ? "rms_norm_q8_native" : "rms_norm_q8", 4, spec);
  if (!kernel) return kernel.status();
  recorder.dispatch(**kernel, {xb.span, wb.span, yb.span, first_bytes(q8, q8_bytes)}, push, groups, 1, 1, label);
  return Status::ok();
}

}  // namespace inferscope::vulkan
