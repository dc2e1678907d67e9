#include "engine/backend/vulkan/ops/vk_delta_net.h"

#include <algorithm>
#include <bit>
#include <string>

#include "engine/backend/vulkan/ops/vk_op_util.h"

namespace inferscope::vulkan {

namespace {

struct SsmConvPush {
  uint32_t n, channels, taps, fresh;
  uint32_t x_off, w_off, s_off;
};

struct PreparePush {
  uint32_t n, channels, n_k_heads, d, n_v_heads;
  float eps;
  uint32_t conv_off, alpha_off, beta_off, dt_off, a_off;
};

struct DeltaNetPush {
  uint32_t n, channels, n_k_heads, n_v_heads, grouped_heads, fresh;
  uint32_t conv_off, g_off, beta_off, out_off, s_off;
};

uint64_t words(int64_t a, int64_t b) { return static_cast<uint64_t>(a) * static_cast<uint64_t>(b); }

}  // namespace

Status record_ssm_conv(Device& device, Recorder& recorder, BufferSpan x, BufferSpan kernel, BufferSpan state,
                       int64_t n, int64_t channels, int64_t taps, bool fresh, DispatchLabel label) {
  constexpr const char* kOp = "ssm_conv";
  if (taps < 2 || taps > kGpuMaxConvTaps) {
    return Status::error("vulkan: a convolution of " + std::to_string(taps) + " taps (2 to " +
                         std::to_string(kGpuMaxConvTaps) + ")");
  }
  if (n <= 0 || channels <= 0) return Status::ok();
  INFERSCOPE_RETURN_IF_ERROR(check_u32(n * channels, kOp, "n * channels"));
  INFERSCOPE_BIND_WORDS(xb, device, x, words(n, channels), kOp, "x");
  INFERSCOPE_BIND_WORDS(wb, device, kernel, words(channels, taps), kOp, "kernel");
  INFERSCOPE_BIND_WORDS(sb, device, state, words(taps - 1, channels), kOp, "state");
  const uint32_t wg = op_workgroup_size(device, 64);
  const uint32_t spec[] = {wg};
  auto k = device.kernel(kOp, 3, spec);
  if (!k) return k.status();
  const SsmConvPush push{static_cast<uint32_t>(n), static_cast<uint32_t>(channels), static_cast<uint32_t>(taps),
                         fresh ? 1u : 0u, xb.first, wb.first, sb.first};
  recorder.dispatch(**k, {xb.span, wb.span, sb.span}, push, op_group_count(device, static_cast<uint64_t>(channels), wg),
                    1, 1, label);
  return Status::ok();
}

Status record_delta_net_prepare(Device& device, Recorder& recorder, const DeltaNetShape& shape, BufferSpan conv,
                                BufferSpan alpha, BufferSpan beta, BufferSpan dt, BufferSpan a, int64_t n, float eps,
                                DispatchLabel label) {
  constexpr const char* kOp = "delta_net_prepare";
  if (n <= 0) return Status::ok();
  const int64_t H = shape.n_v_heads;
  INFERSCOPE_RETURN_IF_ERROR(check_u32(n * shape.channels(), kOp, "n * channels"));
  INFERSCOPE_BIND_WORDS(cb, device, conv, words(n, shape.channels()), kOp, "conv");
  INFERSCOPE_BIND_WORDS(ab, device, alpha, words(n, H), kOp, "alpha");
  INFERSCOPE_BIND_WORDS(bb, device, beta, words(n, H), kOp, "beta");
  INFERSCOPE_BIND_WORDS(db, device, dt, static_cast<uint64_t>(H), kOp, "dt");
  INFERSCOPE_BIND_WORDS(rb, device, a, static_cast<uint64_t>(H), kOp, "a");
  // One workgroup per row, reducing heads of head_dim values.
  const uint32_t wg = op_workgroup_size(device, device.info().is_cpu() ? 32 : 128);
  const uint32_t spec[] = {wg};
  auto k = device.kernel(kOp, 5, spec);
  if (!k) return k.status();
  const PreparePush push{static_cast<uint32_t>(n), static_cast<uint32_t>(shape.channels()),
                         static_cast<uint32_t>(shape.n_k_heads), static_cast<uint32_t>(shape.head_dim),
                         static_cast<uint32_t>(H), eps, cb.first, ab.first, bb.first, db.first, rb.first};
  recorder.dispatch(**k, {cb.span, ab.span, bb.span, db.span, rb.span}, push,
                    op_group_count(device, static_cast<uint64_t>(n), 1), 1, 1, label);
  return Status::ok();
}

Status record_delta_net(Device& device, Recorder& recorder, const DeltaNetShape& shape, BufferSpan conv, BufferSpan g,
                        BufferSpan beta, BufferSpan out, BufferSpan state, int64_t n, bool fresh, DispatchLabel label) {
  constexpr const char* kOp = "delta_net";
  const int64_t d = shape.head_dim, H = shape.n_v_heads;
  if (d < 1 || d > kGpuMaxDeltaNetHeadDim || shape.n_k_heads < 1 || H % shape.n_k_heads != 0) {
    return Status::error("vulkan: Gated DeltaNet heads of " + std::to_string(d) + " values (at most " +
                         std::to_string(kGpuMaxDeltaNetHeadDim) + "), " + std::to_string(H) + " value heads over " +
                         std::to_string(shape.n_k_heads) + " key heads");
  }
  if (n <= 0) return Status::ok();
  INFERSCOPE_RETURN_IF_ERROR(check_u32(n * shape.channels(), kOp, "n * channels"));
  INFERSCOPE_BIND_WORDS(cb, device, conv, words(n, shape.channels()), kOp, "conv");
  INFERSCOPE_BIND_WORDS(gb, device, g, words(n, H), kOp, "g");
  INFERSCOPE_BIND_WORDS(bb, device, beta, words(n, H), kOp, "beta");
  INFERSCOPE_BIND_WORDS(ob, device, out, words(n, shape.value_dim()), kOp, "out");
  INFERSCOPE_BIND_WORDS(sb, device, state, words(H * d, d), kOp, "state");
  // An invocation per value row; a workgroup covers a head's rows, or part of them.
  const uint32_t wg = op_workgroup_size(device, std::bit_ceil(static_cast<uint32_t>(std::min<int64_t>(d, 128))));
  const uint32_t spec[] = {wg, static_cast<uint32_t>(d)};
  auto k = device.kernel(kOp, 5, spec);
  if (!k) return k.status();
  const DeltaNetPush push{static_cast<uint32_t>(n), static_cast<uint32_t>(shape.channels()),
                          static_cast<uint32_t>(shape.n_k_heads), static_cast<uint32_t>(H),
                          shape.grouped_heads ? 1u : 0u, fresh ? 1u : 0u, cb.first, gb.first, bb.first, ob.first,
                          sb.first};
  const auto row_groups = static_cast<uint32_t>((d + wg - 1) / wg);
  recorder.dispatch(**k, {cb.span, gb.span, bb.span, ob.span, sb.span}, push, row_groups, static_cast<uint32_t>(H), 1,
                    label);
  return Status::ok();
}

}  // namespace inferscope::vulkan
