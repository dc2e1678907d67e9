#include "engine/backend/vulkan/ops/vk_moe.h"

#include <algorithm>
#include <string>

#include "engine/backend/vulkan/ops/vk_op_util.h"

namespace inferscope::vulkan {

namespace {

struct MoeRoutePush {
  uint32_t n_tokens;
  uint32_t n_expert;
  uint32_t k;
  uint32_t renormalize;
  uint32_t logits_off, ids_off, weights_off;
};

struct MoeCombinePush {
  uint32_t n_tokens;
  uint32_t n_embd;
  uint32_t k;
  uint32_t has_shexp;
  uint32_t y_off, ids_off, weights_off, out_off, shexp_off, gate_off, h_off;
};

}  // namespace

Status record_moe_route(Device& device, Recorder& recorder, BufferSpan logits, BufferSpan ids, BufferSpan weights,
                        int64_t n_tokens, int64_t n_expert, int64_t k, bool renormalize, DispatchLabel label) {
  constexpr const char* kOp = "moe_route";
  if (n_tokens < 0) return Status::error("moe_route: negative size");
  if (k < 1 || k > n_expert || k > kMaxExpertsUsed) {
    return Status::error("moe_route: k = " + std::to_string(k) + " experts per token must be in 1.." +
                         std::to_string(std::min(n_expert, kMaxExpertsUsed)));
  }
  if (n_tokens == 0) return Status::ok();
  INFERSCOPE_RETURN_IF_ERROR(check_u32(n_tokens * n_expert, kOp, "n_tokens * n_expert"));
  const uint64_t routes = static_cast<uint64_t>(n_tokens * k);
  INFERSCOPE_BIND_WORDS(lb, device, logits, static_cast<uint64_t>(n_tokens * n_expert), kOp, "logits");
  INFERSCOPE_BIND_WORDS(ib, device, ids, routes, kOp, "ids");
  INFERSCOPE_BIND_WORDS(wb, device, weights, routes, kOp, "weights");
  // One invocation per token: small workgroups spread a small batch over more cores.
  const uint32_t wg = op_workgroup_size(device, 64);
  const uint32_t spec[] = {wg};
  auto kernel = device.kernel("moe_route", 3, spec);
  if (!kernel) return kernel.status();
  const MoeRoutePush push{static_cast<uint32_t>(n_tokens), static_cast<uint32_t>(n_expert), static_cast<uint32_t>(k),
                          renormalize ? 1u : 0u, lb.first, ib.first, wb.first};
  recorder.dispatch(**kernel, {lb.span, ib.span, wb.span}, push, op_group_count(device, static_cast<uint64_t>(n_tokens), wg), 1, 1, label);
  return Status::ok();
}

Status record_moe_combine(Device& device, Recorder& recorder, BufferSpan y, BufferSpan ids, BufferSpan weights,
                          BufferSpan out, int64_t n_tokens, int64_t n_embd, int64_t k, const SharedExpertInputs* shared,
                          DispatchLabel label) {
  constexpr const char* kOp = "moe_combine";
  if (n_tokens < 0 || n_embd < 0) return Status::error("moe_combine: negative size");
  if (k < 1 || k > kMaxExpertsUsed) {
    return Status::error("moe_combine: k = " + std::to_string(k) + " must be in 1.." + std::to_string(kMaxExpertsUsed));
  }
  if (n_tokens == 0 || n_embd == 0) return Status::ok();
  INFERSCOPE_RETURN_IF_ERROR(check_u32(n_tokens * k * n_embd, kOp, "n_tokens * k * n_embd"));
  const uint64_t row = static_cast<uint64_t>(n_embd), routes = static_cast<uint64_t>(n_tokens * k);
  const uint64_t rows = static_cast<uint64_t>(n_tokens) * row;
  INFERSCOPE_BIND_WORDS(yb, device, y, routes * row, kOp, "y");
  INFERSCOPE_BIND_WORDS(ib, device, ids, routes, kOp, "ids");
  INFERSCOPE_BIND_WORDS(wb, device, weights, routes, kOp, "weights");
  INFERSCOPE_BIND_WORDS(ob, device, out, rows, kOp, "out");
  // Without a shared expert its three bindings repeat y; the shader never reads them.
  BoundSpan s_out = yb, s_gate = yb, s_h = yb;
  if (shared) {
    auto so = bind_words(device, shared->out, rows, kOp, "shared expert output");
    if (!so) return so.status();
    auto sg = bind_words(device, shared->gate_inp, row, kOp, "shared expert gate");
    if (!sg) return sg.status();
    auto sh = bind_words(device, shared->h, rows, kOp, "shared expert input");
    if (!sh) return sh.status();
    s_out = *so;
    s_gate = *sg;
    s_h = *sh;
  }
  const uint32_t wg = op_workgroup_size(device, 256);
  const uint32_t spec[] = {wg};
  auto kernel = device.kernel("moe_combine", 7, spec);
  if (!kernel) return kernel.status();
  const MoeCombinePush push{static_cast<uint32_t>(n_tokens), static_cast<uint32_t>(n_embd), static_cast<uint32_t>(k),
                            shared ? 1u : 0u,    yb.first, ib.first, wb.first, ob.first,
                            s_out.first,      s_gate.first, s_h.first};
  recorder.dispatch(**kernel, {yb.span, ib.span, wb.span, ob.span, s_out.span, s_gate.span, s_h.span}, push, op_group_count(device, static_cast<uint64_t>(n_tokens), 1), 1, 1, label);
  return Status::ok();
}

}  // namespace inferscope::vulkan
