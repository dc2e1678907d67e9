#include "engine/backend/vulkan/vk_forward_pass.h"

#include <algorithm>
#include <cstring>

#include "engine/backend/vulkan/ops/vk_attention.h"
#include "engine/backend/vulkan/ops/vk_elementwise.h"
#include "engine/backend/vulkan/ops/vk_kv.h"
#include "engine/backend/vulkan/ops/vk_matmul.h"
#include "engine/backend/vulkan/ops/vk_moe.h"
#include "engine/backend/vulkan/ops/vk_norm.h"
#include "engine/backend/vulkan/ops/vk_rope.h"

namespace inferscope::vulkan {

namespace {

std::string gib(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f GiB", static_cast<double>(bytes) / (1ull << 30));
  return text;
}

DispatchLabel label(OpKind op, int64_t layer = -1) { return {static_cast<int>(op), static_cast<int>(layer)}; }

BufferSpan span(const std::unique_ptr<Buffer>& b) { return BufferSpan::whole(*b); }

// A single-layer view of one layer's own cache buffer (see KvCacheLayout).
KvCacheLayout layer_layout(const ModelConfig& c, int64_t n_ctx) { return {1, n_ctx, c.n_embd_kv()}; }

}  // namespace

// Device buffers of one batch of up to max_batch tokens ([max_batch][width] F32 each unless
// noted), sized like the CPU's ScratchPlan.
struct VulkanForwardPass::Activations {
  // Token ids, host-visible (written before submit): per part of the embedding table, the ids
  // relative to its first row, or -1 (a zero row) for ids in other parts; parts kTokenStride apart.
  std::unique_ptr<Buffer> tokens;
  std::unique_ptr<Buffer> x, h, q, k, v, attn, ffn_a, ffn_b, ffn_out;
  std::unique_ptr<Buffer> router;       // [max_batch][n_expert]
  std::unique_ptr<Buffer> expert_ids;   // [max_batch][k] int32
  std::unique_ptr<Buffer> expert_w;     // [max_batch][k]
  std::unique_ptr<Buffer> expert_a, expert_b;  // [max_batch * k][n_ff_expert]
  std::unique_ptr<Buffer> expert_out;   // [max_batch * k][n_embd]
  std::unique_ptr<Buffer> shared_out;   // [max_batch][n_embd] (qwen2moe's shared expert)
  std::unique_ptr<Buffer> logits;       // [max_batch][n_vocab]
  std::unique_ptr<Buffer> logits_host;  // [max_batch][n_vocab], host-visible copy
  std::unique_ptr<Buffer> kv_swap;      // one layer's cache, for reorder()
  std::unique_ptr<Buffer> attention_split;  // partial results of decode attention split over the KV range
  // Inputs of int8 products, quantized (vk_quantize.h): q8_h the normalized rows ([max_batch]
  // [n_embd], written by rms_norm), q8_b the others (attention output, GLU output).
  std::unique_ptr<Buffer> q8_h, q8_b;
  uint64_t bytes = 0;
};

Result<std::unique_ptr<VulkanForwardPass>> VulkanForwardPass::create(std::shared_ptr<const Model> model,
                                                                     std::unique_ptr<Device> device,
                                                                     const ForwardOptions& options) {
  const ModelConfig& c = model->config();
  if (options.n_slots < 1) return Status::error("at least one sequence slot is needed");
  auto fp = std::unique_ptr<VulkanForwardPass>(new VulkanForwardPass());
  fp->model_ = std::move(model);
  fp->device_ = std::move(device);
  fp->n_ctx_ = options.n_ctx > 0 ? options.n_ctx : c.n_ctx_train;
  fp->lengths_.assign(static_cast<size_t>(options.n_slots), 0);
  fp->rope_ = rope_params_for_context(c, fp->model_->weights(), fp->n_ctx_);
  // Logits of a whole batch must fit one binding.
  const uint64_t logits_row = static_cast<uint64_t>(c.n_vocab) * sizeof(float);
  fp->max_batch_ = std::max<int64_t>(
      1, std::min<int64_t>(options.max_batch, static_cast<int64_t>(fp->device_->max_storage_buffer_range() / logits_row)));

  // Fit check before anything is uploaded.
  Device& dev = *fp->device_;
  auto weight_bytes = DeviceWeights::bytes_needed(dev, fp->model_->weights());
  if (!weight_bytes) return weight_bytes.status();
  const uint64_t kv_bytes = 2 * layer_layout(c, fp->n_ctx_).bytes(options.n_slots) * static_cast<uint64_t>(c.n_layer);
  const ScratchPlan plan = ScratchPlan::for_model(c, fp->n_ctx_, fp->max_batch_, 1);
  const uint64_t needed = *weight_bytes + kv_bytes + plan.total_bytes() + 2 * fp->max_batch_ * logits_row;
  if (dev.info().memory_bytes && needed > dev.info().memory_bytes) {
    return Status::error("the model needs " + gib(needed) + " of device memory (weights " + gib(*weight_bytes) +
                         ", KV cache " + gib(kv_bytes) + "), " + dev.info().name + " has " +
                         gib(dev.info().memory_bytes) + "; try a smaller --context or another device");
  }
  const WeightVector* factors = nullptr;
  const ModelWeights& w = fp->model_->weights();
  if (w.rope_freqs.present()) factors = &w.rope_freqs;
  else if (w.rope_factors_long.present()) factors = fp->n_ctx_ > c.n_ctx_orig ? &w.rope_factors_long : &w.rope_factors_short;
  auto weights = DeviceWeights::upload(dev, w, factors ? factors->data : nullptr, factors ? factors->size : 0,
                                       options.on_upload_progress);
  if (!weights) return weights.status();
  fp->weights_ = std::move(*weights);
  INFERSCOPE_RETURN_IF_ERROR(fp->allocate(options));
  fp->recorder_ = std::make_unique<Recorder>(dev);
  INFERSCOPE_RETURN_IF_ERROR(fp->build_pipelines());
  return fp;
}

// Records (without running) a one-token and a full-batch step, so that every pipeline is
// compiled while the model loads rather than during the first reply (seconds on lavapipe).
Status VulkanForwardPass::build_pipelines() {
  for (int64_t n : {int64_t{1}, std::min(max_batch_, n_ctx_)}) {
    INFERSCOPE_RETURN_IF_ERROR(recorder_->begin());
    const Status recorded = record_chunk(0, 0, n, LogitRows::All);
    INFERSCOPE_RETURN_IF_ERROR(recorder_->discard());
    INFERSCOPE_RETURN_IF_ERROR(recorded);
  }
  return Status::ok();
}

VulkanForwardPass::~VulkanForwardPass() {
  // Buffers release their memory through the device: drop them first.
  recorder_.reset();
  act_.reset();
  k_cache_.clear();
  v_cache_.clear();
  weights_.reset();
}

Status VulkanForwardPass::allocate(const ForwardOptions& options) {
  const ModelConfig& c = model_->config();
  Device& dev = *device_;
  act_ = std::make_unique<Activations>();
  Activations& a = *act_;
  const int64_t B = max_batch_, E = c.n_embd;
  const int64_t F = std::max({c.n_ff, c.n_ff_shared, int64_t{1}});
  const int64_t K = std::max<int64_t>(1, c.n_expert_used), X = std::max<int64_t>(1, c.n_expert);
  const int64_t FX = std::max({c.n_ff_expert, c.n_ff, int64_t{1}});
  auto make = [&](std::unique_ptr<Buffer>& b, int64_t elements, MemoryUse use = MemoryUse::Scratch) -> Status {
    auto r = dev.create_buffer(static_cast<uint64_t>(std::max<int64_t>(1, elements)) * 4, use);
    if (!r) return r.status();
    b = std::move(*r);
    a.bytes += b->size();
    return Status::ok();
  };
  token_stride_ = (static_cast<uint64_t>(B) * 4 + 255) / 256 * 256;
  const auto table_parts = static_cast<int64_t>(weights_->token_embd.parts.size());
  INFERSCOPE_RETURN_IF_ERROR(make(a.tokens, static_cast<int64_t>(token_stride_ / 4) * table_parts, MemoryUse::Staging));
  for (auto* b : {&a.x, &a.h, &a.ffn_out}) INFERSCOPE_RETURN_IF_ERROR(make(*b, B * E));
  for (auto* b : {&a.q, &a.attn}) INFERSCOPE_RETURN_IF_ERROR(make(*b, B * c.n_embd_q()));
  for (auto* b : {&a.k, &a.v}) INFERSCOPE_RETURN_IF_ERROR(make(*b, B * c.n_embd_kv()));
  for (auto* b : {&a.ffn_a, &a.ffn_b}) INFERSCOPE_RETURN_IF_ERROR(make(*b, B * F));
  INFERSCOPE_RETURN_IF_ERROR(make(a.router, B * X));
  INFERSCOPE_RETURN_IF_ERROR(make(a.expert_ids, B * K));
  INFERSCOPE_RETURN_IF_ERROR(make(a.expert_w, B * K));
  const int64_t pairs = c.is_moe() ? B * K : 1;
  for (auto* b : {&a.expert_a, &a.expert_b}) INFERSCOPE_RETURN_IF_ERROR(make(*b, pairs * (c.is_moe() ? FX : 1)));
  INFERSCOPE_RETURN_IF_ERROR(make(a.expert_out, pairs * (c.is_moe() ? E : 1)));
  INFERSCOPE_RETURN_IF_ERROR(make(a.shared_out, c.n_ff_shared > 0 ? B * E : 1));
  uint64_t q8_bytes = 4;
  for (auto [rows, cols] : {std::pair{B, c.n_embd_q()}, {B, F}, {pairs, c.is_moe() ? FX : 1}}) {
    if (cols % 32 == 0) q8_bytes = std::max(q8_bytes, q8_activation_bytes(cols, rows));
  }
  INFERSCOPE_RETURN_IF_ERROR(make(a.q8_b, static_cast<int64_t>(q8_bytes / 4)));
  INFERSCOPE_RETURN_IF_ERROR(make(a.q8_h, E % 32 == 0 ? static_cast<int64_t>(q8_activation_bytes(E, B) / 4) : 1));
  INFERSCOPE_RETURN_IF_ERROR(make(a.logits, B * c.n_vocab));
  INFERSCOPE_RETURN_IF_ERROR(make(a.logits_host, B * c.n_vocab, MemoryUse::Staging));
  AttentionParams split;
  split.n_head = c.n_head;
  split.n_head_kv = c.n_head_kv;
  split.head_dim = c.head_dim;
  // CPU drivers run one workgroup per core anyway: no split there.
  if (!dev.info().is_cpu()) {
    INFERSCOPE_RETURN_IF_ERROR(make(a.attention_split, static_cast<int64_t>(attention_split_scratch_bytes(split) / 4)));
  }

  const KvCacheLayout layout = layer_layout(c, n_ctx_);
  const uint64_t layer_bytes = layout.bytes(options.n_slots);
  for (int64_t il = 0; il < c.n_layer; ++il) {
    for (auto* caches : {&k_cache_, &v_cache_}) {
      auto b = dev.create_buffer(layer_bytes, MemoryUse::Kv);
      if (!b) return b.status();
      caches->push_back(std::move(*b));
    }
  }
  if (options.n_slots > 1) {
    auto swap = dev.create_buffer(layer_bytes, MemoryUse::Scratch);
    if (!swap) return swap.status();
    a.kv_swap = std::move(*swap);
    a.bytes += a.kv_swap->size();
  }
  return Status::ok();
}

ExecutorMemory VulkanForwardPass::memory() const {
  ExecutorMemory m;
  m.device_weight_bytes = weights_ ? weights_->bytes() : 0;
  m.kv_cache_bytes = device_->allocated_bytes(MemoryUse::Kv);
  m.scratch_bytes = act_ ? act_->bytes : 0;
  return m;
}

Status VulkanForwardPass::forward(int slot, std::span<const int32_t> tokens, bool all_logits, float* logits) {
  const ModelConfig& c = model_->config();
  if (slot < 0 || slot >= n_slots()) return Status::error("sequence slot out of range");
  if (tokens.empty()) return Status::error("no tokens to evaluate");
  int64_t& length = lengths_[static_cast<size_t>(slot)];
  if (length + static_cast<int64_t>(tokens.size()) > n_ctx_) {
    return Status::error("context is full: " + std::to_string(length) + " + " + std::to_string(tokens.size()) +
                         " tokens exceed the context length of " + std::to_string(n_ctx_) + " (use a larger --context)");
  }
  for (int32_t t : tokens) {
    if (t < 0 || t >= c.n_vocab) {
      return Status::error("token id " + std::to_string(t) + " is outside the vocabulary (0.." +
                           std::to_string(c.n_vocab - 1) + ")");
    }
  }
  for (size_t done = 0; done < tokens.size();) {
    const int64_t n = std::min<int64_t>(max_batch_, static_cast<int64_t>(tokens.size() - done));
    const bool last_chunk = done + static_cast<size_t>(n) == tokens.size();
    write_token_ids(tokens.subspan(done, static_cast<size_t>(n)));
    // Timestamps cost ~25 us each on lavapipe: every prefill chunk is timed, but only one
    // decode step in kProfileEvery.
    INFERSCOPE_RETURN_IF_ERROR(recorder_->begin(n > 1 || decode_steps_++ % kProfileEvery == 0));
    const LogitRows rows = all_logits ? LogitRows::All : last_chunk ? LogitRows::Last : LogitRows::None;
    INFERSCOPE_RETURN_IF_ERROR(record_chunk(slot, length, n, rows));
    INFERSCOPE_RETURN_IF_ERROR(recorder_->submit_and_wait());
    counters_.dispatches += recorder_->dispatches();
    counters_.submissions += 1;
    collect_profile();
    length += n;
    if (all_logits || last_chunk) {
      const int64_t n_out = all_logits ? n : 1;
      float* dst = all_logits ? logits + static_cast<int64_t>(done) * c.n_vocab : logits;
      std::memcpy(dst, act_->logits_host->mapped(), static_cast<size_t>(n_out * c.n_vocab) * sizeof(float));
    }
    done += static_cast<size_t>(n);
  }
  counters_.forward_calls += 1;
  return Status::ok();
}

Status VulkanForwardPass::record_chunk(int slot, int64_t pos0, int64_t n, LogitRows rows) {
  const ModelConfig& c = model_->config();
  Activations& a = *act_;
  Device& dev = *device_;
  Recorder& rec = *recorder_;
  const DeviceWeights& w = *weights_;
  INFERSCOPE_RETURN_IF_ERROR(record_embedding(n));
  for (int64_t il = 0; il < c.n_layer; ++il) {
    const DeviceLayer& l = w.layers[static_cast<size_t>(il)];
    INFERSCOPE_RETURN_IF_ERROR(record_attention_block(l, il, slot, pos0, n));
    INFERSCOPE_RETURN_IF_ERROR(record_ffn_block(l, il, n));
  }
  if (rows == LogitRows::None) return Status::ok();
  const int64_t E = c.n_embd;
  const int64_t n_out = rows == LogitRows::All ? n : 1;
  const BufferSpan first_row{a.x.get(), static_cast<uint64_t>((n - n_out) * E) * 4, 0};
  const MatmulInput out_in(span(a.h), q8_for(a.q8_h, n_out, E, {&w.output}));
  INFERSCOPE_RETURN_IF_ERROR(record_rms_norm(dev, rec, first_row, w.output_norm.span, span(a.h), n_out, E, c.rms_eps,
                                             label(OpKind::Norm), out_in.q8));
  INFERSCOPE_RETURN_IF_ERROR(
      record_matmul_all_parts(w.output, out_in, n_out, span(a.logits), c.n_vocab, label(OpKind::Output)));
  if (c.final_softcap > 0.0f) {
    INFERSCOPE_RETURN_IF_ERROR(
        record_softcap(dev, rec, span(a.logits), n_out * c.n_vocab, c.final_softcap, label(OpKind::Output)));
  }
  rec.copy(span(a.logits), span(a.logits_host), static_cast<uint64_t>(n_out * c.n_vocab) * 4);
  return Status::ok();
}

// Writes the ids of a batch for each part of the embedding table (see Activations::tokens).
void VulkanForwardPass::write_token_ids(std::span<const int32_t> tokens) {
  const auto& parts = weights_->token_embd.parts;
  for (size_t p = 0; p < parts.size(); ++p) {
    auto* ids = reinterpret_cast<int32_t*>(static_cast<uint8_t*>(act_->tokens->mapped()) + p * token_stride_);
    const int64_t first = parts[p].first_row, rows = parts[p].view.rows;
    for (size_t i = 0; i < tokens.size(); ++i) {
      const int64_t r = tokens[i] - first;
      ids[i] = r >= 0 && r < rows ? static_cast<int32_t>(r) : -1;
    }
  }
}

// x = embedding rows of the batch (times embd_scale). A table split into parts is looked up
// part by part, each giving zero rows for the ids it does not hold, and the results summed
// (exactly: every row gets one non-zero term).
Status VulkanForwardPass::record_embedding(int64_t n) {
  const ModelConfig& c = model_->config();
  Activations& a = *act_;
  const auto& parts = weights_->token_embd.parts;
  for (size_t p = 0; p < parts.size(); ++p) {
    const BufferSpan ids{a.tokens.get(), p * token_stride_, token_stride_};
    const BufferSpan out = p == 0 ? span(a.x) : span(a.h);
    INFERSCOPE_RETURN_IF_ERROR(record_get_rows(*device_, *recorder_, parts[p].view, ids, n, c.embd_scale, out,
                                               label(OpKind::Embed)));
    if (p > 0) INFERSCOPE_RETURN_IF_ERROR(record_add(*device_, *recorder_, span(a.x), span(a.h), n * c.n_embd, label(OpKind::Embed)));
  }
  return Status::ok();
}

Status VulkanForwardPass::record_attention_block(const DeviceLayer& l, int64_t il, int slot, int64_t pos0, int64_t n) {
  const ModelConfig& c = model_->config();
  Activations& a = *act_;
  Device& dev = *device_;
  Recorder& rec = *recorder_;
  const int64_t E = c.n_embd, Q = c.n_embd_q(), KV = c.n_embd_kv();
  const DispatchLabel mm = label(OpKind::Matmul, il);
  const MatmulInput qkv_in(span(a.h), q8_for(a.q8_h, n, E, {&l.wq, &l.wk, &l.wv}));
  INFERSCOPE_RETURN_IF_ERROR(record_rms_norm(dev, rec, span(a.x), l.attn_norm.span, span(a.h), n, E, c.rms_eps,
                                             label(OpKind::Norm, il), qkv_in.q8));
  INFERSCOPE_RETURN_IF_ERROR(record_matmul_all_parts(l.wq, qkv_in, n, span(a.q), Q, mm));
  INFERSCOPE_RETURN_IF_ERROR(record_matmul_all_parts(l.wk, qkv_in, n, span(a.k), KV, mm));
  INFERSCOPE_RETURN_IF_ERROR(record_matmul_all_parts(l.wv, qkv_in, n, span(a.v), KV, mm));
  for (auto [bias, out, width] : {std::tuple{&l.bq, &a.q, Q}, {&l.bk, &a.k, KV}, {&l.bv, &a.v, KV}}) {
    if (!bias->present()) continue;
    INFERSCOPE_RETURN_IF_ERROR(record_add_bias(dev, rec, span(*out), bias->span, n, width, label(OpKind::Rope, il)));
  }
  const RopeDims dims{c.n_head, c.n_head_kv, c.head_dim, c.n_rot, c.rope_layout == RopeLayout::Neox};
  const BufferSpan factors = weights_->rope_factors.present() ? weights_->rope_factors.span : BufferSpan{};
  INFERSCOPE_RETURN_IF_ERROR(
      record_rope(dev, rec, span(a.q), span(a.k), factors, dims, rope_, n, pos0, label(OpKind::Rope, il)));
  const KvCacheLayout layout = layer_layout(c, n_ctx_);
  const BufferSpan kc = span(k_cache_[static_cast<size_t>(il)]), vc = span(v_cache_[static_cast<size_t>(il)]);
  INFERSCOPE_RETURN_IF_ERROR(
      record_kv_store(dev, rec, span(a.k), span(a.v), kc, vc, layout, slot, 0, pos0, n, label(OpKind::Rope, il)));
  AttentionParams ap;
  ap.n_head = c.n_head;
  ap.n_head_kv = c.n_head_kv;
  ap.head_dim = c.head_dim;
  ap.scale = c.attn_scale;
  ap.softcap = c.attn_softcap;
  ap.n_swa = c.uses_sliding_window(il) ? c.n_swa : 0;
  const MatmulInput o_in(span(a.attn), q8_for(a.q8_b, n, Q, {&l.wo}));
  INFERSCOPE_RETURN_IF_ERROR(record_attention(dev, rec, span(a.q), kc, vc, layout, slot, 0, span(a.attn), ap, n, pos0,
                                              label(OpKind::Attention, il),
                                              a.attention_split ? span(a.attention_split) : BufferSpan{}, o_in.q8));
  INFERSCOPE_RETURN_IF_ERROR(record_matmul_all_parts(l.wo, o_in, n, span(a.h), E, mm));
  if (l.attn_post_norm.present()) {
    INFERSCOPE_RETURN_IF_ERROR(
        record_rms_norm(dev, rec, span(a.h), l.attn_post_norm.span, span(a.h), n, E, c.rms_eps, label(OpKind::Norm, il)));
  }
  return record_add(dev, rec, span(a.x), span(a.h), n * E, label(OpKind::Ffn, il));
}

Status VulkanForwardPass::record_ffn_block(const DeviceLayer& l, int64_t il, int64_t n) {
  const ModelConfig& c = model_->config();
  Activations& a = *act_;
  Device& dev = *device_;
  Recorder& rec = *recorder_;
  const int64_t E = c.n_embd;
  // The normalized rows feed the dense FFN, or the router, the experts and the shared expert.
  const MatmulInput ffn_in(span(a.h), q8_for(a.q8_h, n, E,
                                             {&l.ffn_gate, &l.ffn_up, &l.ffn_gate_inp, &l.ffn_gate_exps, &l.ffn_up_exps,
                                              &l.ffn_gate_shexp, &l.ffn_up_shexp}));
  INFERSCOPE_RETURN_IF_ERROR(record_rms_norm(dev, rec, span(a.x), l.ffn_norm.span, span(a.h), n, E, c.rms_eps,
                                             label(OpKind::Norm, il), ffn_in.q8));
  if (c.is_moe()) {
    INFERSCOPE_RETURN_IF_ERROR(record_moe(l, il, n, ffn_in));
  } else {
    const int64_t F = l.ffn_gate.rows;
    const DispatchLabel mm = label(OpKind::Matmul, il);
    INFERSCOPE_RETURN_IF_ERROR(record_matmul_all_parts(l.ffn_gate, ffn_in, n, span(a.ffn_a), F, mm));
    INFERSCOPE_RETURN_IF_ERROR(record_matmul_all_parts(l.ffn_up, ffn_in, n, span(a.ffn_b), F, mm));
    const GluKind kind = c.ffn_activation == FfnActivation::GeluTanh ? GluKind::GeGlu : GluKind::SwiGlu;
    const MatmulInput down_in(span(a.ffn_a), q8_for(a.q8_b, n, F, {&l.ffn_down}));
    INFERSCOPE_RETURN_IF_ERROR(record_glu(dev, rec, kind, span(a.ffn_a), span(a.ffn_b), span(a.ffn_a), n, F, 0, 0, 0,
                                          label(OpKind::Ffn, il), down_in.q8));
    INFERSCOPE_RETURN_IF_ERROR(record_matmul_all_parts(l.ffn_down, down_in, n, span(a.ffn_out), E, mm));
  }
  if (l.ffn_post_norm.present()) {
    INFERSCOPE_RETURN_IF_ERROR(record_rms_norm(dev, rec, span(a.ffn_out), l.ffn_post_norm.span, span(a.ffn_out), n, E,
                                               c.rms_eps, label(OpKind::Norm, il)));
  }
  return record_add(dev, rec, span(a.x), span(a.ffn_out), n * E, label(OpKind::Ffn, il));
}

Status VulkanForwardPass::record_moe(const DeviceLayer& l, int64_t il, int64_t n, const MatmulInput& h) {
  const ModelConfig& c = model_->config();
  Activations& a = *act_;
  Device& dev = *device_;
  Recorder& rec = *recorder_;
  const int64_t E = c.n_embd, X = c.n_expert, K = c.n_expert_used;
  const DispatchLabel moe = label(OpKind::Moe, il), mm = label(OpKind::Matmul, il);
  INFERSCOPE_RETURN_IF_ERROR(record_matmul_all_parts(l.ffn_gate_inp, h, n, span(a.router), X, mm));
  INFERSCOPE_RETURN_IF_ERROR(record_moe_route(dev, rec, span(a.router), span(a.expert_ids), span(a.expert_w), n, X, K,
                                              c.gating == ExpertGating::SoftmaxTopKRenormalized, moe));
  const WeightView& gate = l.ffn_gate_exps.parts[0].view;
  const WeightView& up = l.ffn_up_exps.parts[0].view;
  const WeightView& down = l.ffn_down_exps.parts[0].view;
  INFERSCOPE_RETURN_IF_ERROR(
      record_matmul_experts(dev, rec, gate, h, false, span(a.expert_ids), n, K, span(a.expert_a), mm));
  INFERSCOPE_RETURN_IF_ERROR(
      record_matmul_experts(dev, rec, up, h, false, span(a.expert_ids), n, K, span(a.expert_b), mm));
  const MatmulInput down_in(span(a.expert_a), q8_for(a.q8_b, n * K, gate.rows, {&l.ffn_down_exps}));
  INFERSCOPE_RETURN_IF_ERROR(record_glu(dev, rec, GluKind::SwiGlu, span(a.expert_a), span(a.expert_b), span(a.expert_a),
                                        n * K, gate.rows, 0, 0, 0, label(OpKind::Ffn, il), down_in.q8));
  INFERSCOPE_RETURN_IF_ERROR(
      record_matmul_experts(dev, rec, down, down_in, true, span(a.expert_ids), n, K, span(a.expert_out), mm));
  if (!l.ffn_gate_shexp.present()) {
    return record_moe_combine(dev, rec, span(a.expert_out), span(a.expert_ids), span(a.expert_w), span(a.ffn_out), n, E,
                              K, nullptr, moe);
  }
  const int64_t S = l.ffn_gate_shexp.rows;
  INFERSCOPE_RETURN_IF_ERROR(record_matmul_all_parts(l.ffn_gate_shexp, h, n, span(a.ffn_a), S, mm));
  INFERSCOPE_RETURN_IF_ERROR(record_matmul_all_parts(l.ffn_up_shexp, h, n, span(a.ffn_b), S, mm));
  const MatmulInput shared_down_in(span(a.ffn_a), q8_for(a.q8_b, n, S, {&l.ffn_down_shexp}));
  INFERSCOPE_RETURN_IF_ERROR(record_glu(dev, rec, GluKind::SwiGlu, span(a.ffn_a), span(a.ffn_b), span(a.ffn_a), n, S, 0,
                                        0, 0, label(OpKind::Ffn, il), shared_down_in.q8));
  INFERSCOPE_RETURN_IF_ERROR(record_matmul_all_parts(l.ffn_down_shexp, shared_down_in, n, span(a.shared_out), E, mm));
  const SharedExpertInputs shared{span(a.shared_out), l.ffn_gate_inp_shexp.span, span(a.h)};
  return record_moe_combine(dev, rec, span(a.expert_out), span(a.expert_ids), span(a.expert_w), span(a.ffn_out), n, E, K,
                            &shared, moe);
}

BufferSpan VulkanForwardPass::q8_for(const std::unique_ptr<Buffer>& q8, int64_t rows, int64_t cols,
                                     std::initializer_list<const DeviceMatrix*> consumers) const {
  for (const DeviceMatrix* m : consumers) {
    if (m->present() && matmul_takes_q8(*device_, m->type, cols, rows, m->n_mats > 1)) return span(q8);
  }
  return {};
}

Status VulkanForwardPass::record_matmul_all_parts(const DeviceMatrix& w, const MatmulInput& x, int64_t n, BufferSpan y,
                                                  int64_t y_stride, DispatchLabel l) {
  for (const DeviceMatrix::Part& part : w.parts) {
    INFERSCOPE_RETURN_IF_ERROR(record_matmul(*device_, *recorder_, part.view, x, n, y, y_stride, part.first_row, l));
  }
  return Status::ok();
}

Status VulkanForwardPass::reorder(std::span<const int32_t> parents) {
  if (parents.size() != lengths_.size()) return Status::error("reorder needs one parent per slot");
  for (int32_t p : parents) {
    if (p < 0 || p >= n_slots()) return Status::error("reorder parent out of range");
  }
  const ModelConfig& c = model_->config();
  const uint64_t slot_bytes = layer_layout(c, n_ctx_).bytes(1);
  Recorder& rec = *recorder_;
  INFERSCOPE_RETURN_IF_ERROR(rec.begin());
  for (auto* caches : {&k_cache_, &v_cache_}) {
    for (const auto& cache : *caches) {
      rec.copy(span(cache), span(act_->kv_swap), cache->size());
      for (size_t i = 0; i < parents.size(); ++i) {
        rec.copy(BufferSpan{act_->kv_swap.get(), static_cast<uint64_t>(parents[i]) * slot_bytes, 0},
                 BufferSpan{cache.get(), i * slot_bytes, 0}, slot_bytes);
      }
    }
  }
  INFERSCOPE_RETURN_IF_ERROR(rec.submit_and_wait());
  counters_.submissions += 1;
  std::vector<int64_t> lengths(lengths_.size());
  for (size_t i = 0; i < parents.size(); ++i) lengths[i] = lengths_[static_cast<size_t>(parents[i])];
  lengths_ = std::move(lengths);
  return Status::ok();
}

void VulkanForwardPass::collect_profile() {
  const auto n_layer = static_cast<size_t>(model_->config().n_layer);
  if (profile_.layer_seconds.size() != n_layer) profile_.layer_seconds.assign(n_layer, 0.0);
  for (const DispatchTiming& t : recorder_->timings()) {
    if (t.label.op >= 0 && t.label.op < static_cast<int>(OpKind::Count)) profile_.seconds[static_cast<size_t>(t.label.op)] += t.seconds;
    if (t.label.layer >= 0 && static_cast<size_t>(t.label.layer) < n_layer) profile_.layer_seconds[static_cast<size_t>(t.label.layer)] += t.seconds;
  }
}

}  // namespace inferscope::vulkan
