#include "engine/backend/vulkan/ops/vk_elementwise.h"

#include <string>

#include "engine/backend/vulkan/ops/vk_op_util.h"
#include "engine/backend/vulkan/ops/vk_quantize.h"

namespace inferscope::vulkan {

namespace {

constexpr uint32_t kElementwiseWorkgroup = 256;

struct AddPush {
  uint32_t n;
  uint32_t n_cols;
  float scale;
  uint32_t y_off, x_off;
  uint32_t ids_off;
};

struct UnaryPush {
  uint32_t n;
  float a;
  float b;
  uint32_t x_off;
};

struct MulColumnsPush {
  uint32_t n;
  uint32_t n_cols;
  uint32_t src_stride;
  uint32_t dst_off, src_off;
};

struct GluPush {
  uint32_t n_rows;
  uint32_t n_cols;
  uint32_t gate_stride;
  uint32_t up_stride;
  uint32_t out_stride;
  uint32_t gate_off, up_off, out_off;
};

// Records y (op) x over n elements with shader `name` (add.comp variants).
Status record_add_variant(Device& device, Recorder& recorder, const char* name, BufferSpan y, BufferSpan x,
                          uint64_t x_elements, int64_t n, uint32_t n_cols, float scale, DispatchLabel label) {
  if (n < 0) return Status::error(std::string(name) + ": negative size");
  if (n == 0) return Status::ok();
  INFERSCOPE_RETURN_IF_ERROR(check_u32(n, name, "n"));
  INFERSCOPE_BIND_WORDS(yb, device, y, static_cast<uint64_t>(n), name, "y");
  INFERSCOPE_BIND_WORDS(xb, device, x, x_elements, name, "x");
  const uint32_t wg = op_workgroup_size(device, kElementwiseWorkgroup);
  const uint32_t spec[] = {wg};
  auto kernel = device.kernel(name, 2, spec);
  if (!kernel) return kernel.status();
  const AddPush push{static_cast<uint32_t>(n), n_cols, scale, yb.first, xb.first, 0};
  recorder.dispatch(**kernel, {yb.span, xb.span}, push,
                    op_group_count(device, static_cast<uint64_t>(n), wg), 1, 1, label);
  return Status::ok();
}

Status record_unary(Device& device, Recorder& recorder, const char* name, BufferSpan x, int64_t n, float a, float b,
                    DispatchLabel label) {
  if (n < 0) return Status::error(std::string(name) + ": negative size");
  if (n == 0) return Status::ok();
  INFERSCOPE_RETURN_IF_ERROR(check_u32(n, name, "n"));
  INFERSCOPE_BIND_WORDS(xb, device, x, static_cast<uint64_t>(n), name, "x");
  const uint32_t wg = op_workgroup_size(device, kElementwiseWorkgroup);
  const uint32_t spec[] = {wg};
  auto kernel = device.kernel(name, 1, spec);
  if (!kernel) return kernel.status();
  const UnaryPush push{static_cast<uint32_t>(n), a, b, xb.first};
  recorder.dispatch(**kernel, {xb.span}, push,
                    op_group_count(device, static_cast<uint64_t>(n), wg), 1, 1, label);
  return Status::ok();
}

}  // namespace

Status record_add(Device& device, Recorder& recorder, BufferSpan y, BufferSpan x, int64_t n, DispatchLabel label) {
  return record_add_variant(device, recorder, "add", y, x, static_cast<uint64_t>(n > 0 ? n : 0), n, 1, 1.0f, label);
}

Status record_add_bias(Device& device, Recorder& recorder, BufferSpan y, BufferSpan bias, int64_t n_rows,
                       int64_t n_cols, DispatchLabel label) {
  if (n_rows < 0 || n_cols < 0) return Status::error("add_bias: negative size");
  if (n_rows == 0 || n_cols == 0) return Status::ok();
  INFERSCOPE_RETURN_IF_ERROR(check_u32(n_rows * n_cols, "add_bias", "n_rows * n_cols"));
  return record_add_variant(device, recorder, "add_bias", y, bias, static_cast<uint64_t>(n_cols), n_rows * n_cols,
                            static_cast<uint32_t>(n_cols), 1.0f, label);
}

Status record_add_expert_bias(Device& device, Recorder& recorder, BufferSpan y, BufferSpan bias, int64_t n_expert,
                              BufferSpan ids, int64_t n_rows, int64_t n_cols, DispatchLabel label) {
  constexpr const char* kOp = "add_expert_bias";
  if (n_rows < 0 || n_cols < 0 || n_expert < 0) return Status::error("add_expert_bias: negative size");
  if (n_rows == 0 || n_cols == 0) return Status::ok();
  INFERSCOPE_RETURN_IF_ERROR(check_u32(n_rows * n_cols, kOp, "n_rows * n_cols"));
  INFERSCOPE_RETURN_IF_ERROR(check_u32(n_expert * n_cols, kOp, "n_expert * n_cols"));
  INFERSCOPE_BIND_WORDS(yb, device, y, static_cast<uint64_t>(n_rows * n_cols), kOp, "y");
  INFERSCOPE_BIND_WORDS(xb, device, bias, static_cast<uint64_t>(n_expert * n_cols), kOp, "bias");
  INFERSCOPE_BIND_WORDS(ib, device, ids, static_cast<uint64_t>(n_rows), kOp, "ids");
  const uint32_t wg = op_workgroup_size(device, kElementwiseWorkgroup);
  const uint32_t spec[] = {wg};
  auto kernel = device.kernel(kOp, 3, spec);
  if (!kernel) return kernel.status();
  const AddPush push{static_cast<uint32_t>(n_rows * n_cols), static_cast<uint32_t>(n_cols), 1.0f, yb.first, xb.first,
                     ib.first};
  recorder.dispatch(**kernel, {yb.span, xb.span, ib.span}, push,
                    op_group_count(device, static_cast<uint64_t>(n_rows * n_cols), wg), 1, 1, label);
  return Status::ok();
}

Status record_add_scaled(Device& device, Recorder& recorder, BufferSpan y, BufferSpan x, int64_t n, float scale,
                         DispatchLabel label) {
  return record_add_variant(device, recorder, "add_scaled", y, x, static_cast<uint64_t>(n > 0 ? n : 0), n, 1, scale,
                            label);
}

Status record_scale(Device& device, Recorder& recorder, BufferSpan x, int64_t n, float scale, DispatchLabel label) {
  return record_unary(device, recorder, "scale", x, n, scale, 0.0f, label);
}

Status record_mul_columns(Device& device, Recorder& recorder, BufferSpan dst, BufferSpan src, int64_t n_rows,
                          int64_t n_cols, int64_t src_stride, DispatchLabel label) {
  constexpr const char* kOp = "mul_columns";
  if (n_rows < 0 || n_cols < 0) return Status::error("mul_columns: negative size");
  if (src_stride < n_cols) return Status::error("mul_columns: src rows are narrower than the columns taken");
  if (n_rows == 0 || n_cols == 0) return Status::ok();
  const int64_t src_extent = (n_rows - 1) * src_stride + n_cols;  // floats: the last row ends n_cols on
  INFERSCOPE_RETURN_IF_ERROR(check_u32(n_rows * n_cols, kOp, "n_rows * n_cols"));
  INFERSCOPE_RETURN_IF_ERROR(check_u32(src_extent, kOp, "src extent"));
  INFERSCOPE_BIND_WORDS(db, device, dst, static_cast<uint64_t>(n_rows * n_cols), kOp, "dst");
  INFERSCOPE_BIND_WORDS(sb, device, src, static_cast<uint64_t>(src_extent), kOp, "src");
  const uint32_t wg = op_workgroup_size(device, kElementwiseWorkgroup);
  const uint32_t spec[] = {wg};
  auto kernel = device.kernel(kOp, 2, spec);
  if (!kernel) return kernel.status();
  const MulColumnsPush push{static_cast<uint32_t>(n_rows * n_cols), static_cast<uint32_t>(n_cols),
                            static_cast<uint32_t>(src_stride), db.first, sb.first};
  recorder.dispatch(**kernel, {db.span, sb.span}, push,
                    op_group_count(device, static_cast<uint64_t>(n_rows * n_cols), wg), 1, 1, label);
  return Status::ok();
}

Status record_softcap(Device& device, Recorder& recorder, BufferSpan x, int64_t n, float cap, DispatchLabel label) {
  if (!(cap > 0.0f)) return Status::error("softcap: the cap must be positive, got " + std::to_string(cap));
  // The CPU multiplies by the reciprocal, computed once in F32: the same value here.
  return record_unary(device, recorder, "softcap", x, n, cap, 1.0f / cap, label);
}

Status record_gelu(Device& device, Recorder& recorder, BufferSpan x, int64_t n, DispatchLabel label) {
  return record_unary(device, recorder, "gelu", x, n, 0.0f, 0.0f, label);
}

Status record_glu(Device& device, Recorder& recorder, GluKind kind, BufferSpan gate, BufferSpan up, BufferSpan out,
                  int64_t n_rows, int64_t n_cols, int64_t gate_stride, int64_t up_stride, int64_t out_stride,
                  DispatchLabel label, BufferSpan q8) {
  const char* name = kind == GluKind::GeGlu         ? "geglu"
                     : kind == GluKind::SwigluOai   ? "swiglu_oai"
                     : kind == GluKind::SigmoidGate ? "sigmoid_gate"
                                                    : "swiglu";
  if (n_rows < 0 || n_cols < 0) return Status::error(std::string(name) + ": negative size");
  if (n_rows == 0 || n_cols == 0) return Status::ok();
  if (gate_stride == 0) gate_stride = n_cols;
  if (up_stride == 0) up_stride = n_cols;
  if (out_stride == 0) out_stride = n_cols;
  if (gate_stride < n_cols || up_stride < n_cols || out_stride < n_cols) {
    return Status::error(std::string(name) + ": a row stride is shorter than the row (" + std::to_string(n_cols) + ")");
  }
  // Floats each operand spans: the last row ends n_cols after its start.
  auto extent = [&](int64_t stride) { return (n_rows - 1) * stride + n_cols; };
  INFERSCOPE_RETURN_IF_ERROR(check_u32(n_rows * n_cols, name, "n_rows * n_cols"));
  INFERSCOPE_RETURN_IF_ERROR(check_u32(extent(gate_stride), name, "gate extent"));
  INFERSCOPE_RETURN_IF_ERROR(check_u32(extent(up_stride), name, "up extent"));
  INFERSCOPE_RETURN_IF_ERROR(check_u32(extent(out_stride), name, "out extent"));
  INFERSCOPE_BIND_WORDS(gb, device, gate, static_cast<uint64_t>(extent(gate_stride)), name, "gate");
  INFERSCOPE_BIND_WORDS(ub, device, up, static_cast<uint64_t>(extent(up_stride)), name, "up");
  INFERSCOPE_BIND_WORDS(ob, device, out, static_cast<uint64_t>(extent(out_stride)), name, "out");
  const uint32_t wg = op_workgroup_size(device, kElementwiseWorkgroup);
  const uint32_t spec[] = {wg};
  const GluPush push{static_cast<uint32_t>(n_rows), static_cast<uint32_t>(n_cols), static_cast<uint32_t>(gate_stride),
                     static_cast<uint32_t>(up_stride), static_cast<uint32_t>(out_stride), gb.first, ub.first, ob.first};
  if (!q8.buffer) {
    auto kernel = device.kernel(name, 3, spec);
    if (!kernel) return kernel.status();
    recorder.dispatch(**kernel, {gb.span, ub.span, ob.span}, push,
                      op_group_count(device, static_cast<uint64_t>(n_rows * n_cols), wg), 1, 1, label);
    return Status::ok();
  }
  if (n_cols % 32 != 0) {
    return Status::error(std::string(name) + ": quantized output needs rows of a multiple of 32 values");
  }
  const uint64_t q8_bytes = q8_activation_bytes(n_cols, n_rows);
  INFERSCOPE_RETURN_IF_ERROR(check_u32(q8_bytes, name, "q8 bytes"));
  INFERSCOPE_RETURN_IF_ERROR(check_span(device, q8, q8_bytes, name, "q8"));
  const std::string q8_name = std::string(name) + (int8_native_variant(device) ? "_q8_native" : "_q8");
  // The quantization has barriers: on CPU drivers a small workgroup (fewer slices to switch).
  const uint32_t q8_spec[] = {device.info().is_cpu() ? op_workgroup_size(device, 64) : wg};
  auto kernel = device.kernel(q8_name, 4, q8_spec);
  if (!kernel) return kernel.status();
  recorder.dispatch(**kernel, {gb.span, ub.span, ob.span, first_bytes(q8, q8_bytes)}, push,
                    op_group_count(device, static_cast<uint64_t>(n_rows * n_cols / 4), q8_spec[0]), 1, 1, label);
  return Status::ok();
}

}  // namespace inferscope::vulkan
