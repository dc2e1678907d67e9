#include "engine/model/activation_plan.h"

#include <algorithm>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/matmul.h"

namespace inferscope {

namespace {

// The dense FFN's width, or the shared expert's, whichever the layers run (0: neither).
int64_t dense_ffn_width(const ModelConfig& c) { return std::max(c.is_moe() ? 0 : c.n_ff, c.n_ff_shared); }

}  // namespace

ActivationPlan ActivationPlan::for_model(const ModelConfig& c, int64_t n_ctx, int64_t max_batch, int n_threads,
                                         int64_t output_width) {
  ActivationPlan p;
  const int64_t B = max_batch, E = c.n_embd, F = dense_ffn_width(c);
  p.batch = B;
  p.routes = c.is_moe() ? B * c.n_expert_used : 0;
  const auto set = [&](Act a, int64_t rows, int64_t width) { p.acts[static_cast<size_t>(a)] = {width > 0 ? rows : 0, width}; };
  for (Act a : {Act::X, Act::H, Act::FfnOut}) set(a, B, E);
  const DeltaNetShape& d = c.delta_net;
  set(Act::Q, B, c.n_embd_q());
  set(Act::Attn, B, std::max(c.n_embd_q(), d.value_dim()));
  set(Act::Gate, B, c.has_attn_gate || c.is_hybrid() ? std::max(c.n_embd_q(), d.value_dim()) : 0);
  set(Act::Conv, B, d.channels());
  for (Act a : {Act::Alpha, Act::Beta}) set(a, B, d.n_v_heads);
  for (Act a : {Act::K, Act::V}) set(a, B, c.n_embd_kv());
  for (Act a : {Act::FfnA, Act::FfnB}) set(a, B, std::max(F, c.n_embd_per_layer));
  for (Act a : {Act::PerLayer, Act::PerLayerRows}) set(a, B, c.n_layer * c.n_embd_per_layer);
  set(Act::Router, B, c.is_moe() ? c.n_expert : 0);
  for (Act a : {Act::ExpertA, Act::ExpertB}) set(a, p.routes, c.is_moe() ? c.n_ff_expert : 0);
  set(Act::ExpertOut, p.routes, E);
  set(Act::SharedOut, B, c.n_ff_shared > 0 ? E : 0);
  set(Act::MtpHidden, B, c.has_mtp() ? E : 0);
  set(Act::MtpInput, B, c.has_mtp() ? 2 * E : 0);
  set(Act::Logits, B, output_width);
  p.scores = n_threads * kernels::attention_scratch_floats(n_ctx, c.max_head_dim());
  p.rope = B * c.n_rot / 2 + (c.has_swa_rope ? B * c.window_n_rot() / 2 : 0);  // the window layers' after the others'
  p.expert_rows = c.is_moe() ? 3 * B * std::max(E, c.n_ff_expert) : 0;
  size_t packed = 0;
  for (kernels::GgmlType t : {kernels::GgmlType::F32, kernels::GgmlType::F16, kernels::GgmlType::BF16,
                              kernels::GgmlType::Q8_0, kernels::GgmlType::Q4_0}) {
    for (int64_t k : {E, c.n_embd_q(), F, c.n_ff_expert, d.value_dim(), c.n_embd_per_layer}) {
      if (k > 0) packed = std::max(packed, kernels::packed_activation_bytes(t, k, B));
    }
  }
  p.packed_region = (packed + 63) / 64 * 64;
  return p;
}

int64_t ActivationPlan::product_input_width() const {
  int64_t widest = 0;
  for (Act a : {Act::X, Act::H, Act::Attn, Act::Gate, Act::FfnA, Act::ExpertA, Act::MtpInput}) widest = std::max(widest, (*this)[a].width);
  return widest;
}

uint64_t ActivationPlan::activation_bytes() const {
  int64_t floats = 0;
  for (size_t a = 0; a < kActCount; ++a) {
    if (static_cast<Act>(a) != Act::Logits) floats += acts[a].floats();
  }
  return static_cast<uint64_t>(floats) * sizeof(float);
}

uint64_t ActivationPlan::host_bytes() const {
  const int64_t floats = scores + 2 * rope + expert_rows + routes;  // routes: the choices' weights
  return activation_bytes() + static_cast<uint64_t>(floats) * sizeof(float) + kPackedRegions * packed_region +
         static_cast<uint64_t>(routes) * sizeof(int32_t) + static_cast<uint64_t>(batch) * sizeof(int64_t);
}

}  // namespace inferscope
