#include "engine/model/forward_pass.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>

#include "engine/model/memory_estimate.h"
#include "engine/model/rope_context.h"

namespace inferscope {

namespace {

OpLabel at(OpKind kind, int64_t layer = -1) { return {kind, layer}; }

}  // namespace

Result<std::unique_ptr<ForwardPass>> ForwardPass::create(std::shared_ptr<const Model> model,
                                                         std::unique_ptr<BackendOps> ops,
                                                         const ForwardOptions& options) {
  const ModelConfig& c = model->config();
  if (options.n_slots < 1) return Status::error("at least one sequence slot is needed");
  auto fp = std::unique_ptr<ForwardPass>(new ForwardPass());
  fp->model_ = std::move(model);
  fp->ops_ = std::move(ops);
  ForwardPlan& plan = fp->plan_;
  plan.n_ctx = options.n_ctx > 0 ? options.n_ctx : c.n_ctx_train;
  plan.n_slots = options.n_slots;
  plan.max_batch = std::max<int64_t>(1, std::min(options.max_batch, fp->ops_->max_batch_limit()));
  INFERSCOPE_RETURN_IF_ERROR(check_kv_block_size(options.kv_block_size));
  plan.kv = KvLayout::for_model(c, plan.n_ctx, plan.n_slots, options.kv_types, options.kv_block_size);
  plan.scratch = ScratchPlan::for_model(c, plan.n_ctx, plan.max_batch, fp->ops_->threads());
  plan.rope = rope_params_for_context(c, fp->model_->weights(), plan.n_ctx);
  plan.profile = &fp->profile_;
  plan.kv.n_blocks += static_cast<int64_t>(options.kv_cache_budget_bytes / plan.kv.bytes_per_block());
  fp->pool_ = std::make_unique<BlockPool>(static_cast<int32_t>(plan.kv.n_blocks), plan.kv.block_size);
  for (int s = 0; s < plan.n_slots; ++s) fp->tables_.emplace_back(*fp->pool_);
  fp->tokens_.resize(static_cast<size_t>(plan.n_slots));
  fp->prefix_seed_ = fp->seed_for_prefixes();
  INFERSCOPE_RETURN_IF_ERROR(check_kv_types(c, plan.kv.types));
  INFERSCOPE_RETURN_IF_ERROR(fp->ops_->supports(plan));
  INFERSCOPE_RETURN_IF_ERROR(fp->fit_check());
  INFERSCOPE_RETURN_IF_ERROR(fp->ops_->upload(options.on_upload_progress));
  INFERSCOPE_RETURN_IF_ERROR(fp->ops_->allocate(plan));
  if (fp->ops_->records()) INFERSCOPE_RETURN_IF_ERROR(fp->warm_up());
  return fp;
}

// Refuses, before anything is uploaded, a model that does not fit the device's memory.
Status ForwardPass::fit_check() {
  const DeviceNeeds needs = ops_->needs(plan_);
  const uint64_t total = needs.weight_bytes + needs.kv_bytes + needs.scratch_bytes;
  if (needs.memory_bytes == 0 || total <= needs.memory_bytes) return Status::ok();
  return Status::error("the model needs " + format_gib(total) + " of device memory (weights " +
                       format_gib(needs.weight_bytes) + ", KV cache " + format_gib(needs.kv_bytes) + "), " +
                       ops_->name() + " has " + format_gib(needs.memory_bytes) +
                       "; try a smaller --context or another device");
}

// Records (without running) a one-token and a full-batch chunk, so that every pipeline is
// compiled while the model loads rather than during the first reply (seconds on lavapipe).
Status ForwardPass::warm_up() {
  const std::vector<int32_t> tokens(static_cast<size_t>(plan_.max_batch), 0);
  for (int64_t n : {int64_t{1}, std::min(plan_.max_batch, plan_.n_ctx)}) {
    BlockTable scratch(*pool_);
    INFERSCOPE_RETURN_IF_ERROR(make_writable(scratch, n));
    const Chunk chunk{0, 0, n, n, nullptr, scratch.blocks()};
    INFERSCOPE_RETURN_IF_ERROR(ops_->begin_chunk(chunk));
    const Status recorded = run_chunk(chunk, std::span(tokens).first(static_cast<size_t>(n)));
    INFERSCOPE_RETURN_IF_ERROR(ops_->discard_chunk());
    INFERSCOPE_RETURN_IF_ERROR(recorded);
  }
  return Status::ok();
}

Status ForwardPass::forward(int slot, std::span<const int32_t> tokens, bool all_logits, float* logits) {
  const ModelConfig& c = model_->config();
  if (slot < 0 || slot >= n_slots()) return Status::error("sequence slot out of range");
  if (tokens.empty()) return Status::error("no tokens to evaluate");
  BlockTable& table = tables_[static_cast<size_t>(slot)];
  const int64_t length = table.length();
  if (length + static_cast<int64_t>(tokens.size()) > plan_.n_ctx) {
    return Status::error("context is full: " + std::to_string(length) + " + " + std::to_string(tokens.size()) +
                         " tokens exceed the context length of " + std::to_string(plan_.n_ctx) +
                         " (use a larger --context)");
  }
  for (int32_t t : tokens) {
    if (t < 0 || t >= c.n_vocab) {
      return Status::error("token id " + std::to_string(t) + " is outside the vocabulary (0.." +
                           std::to_string(c.n_vocab - 1) + ")");
    }
  }
  for (size_t done = 0; done < tokens.size();) {
    const int64_t n = std::min<int64_t>(plan_.max_batch, static_cast<int64_t>(tokens.size() - done));
    const bool last_chunk = done + static_cast<size_t>(n) == tokens.size();
    INFERSCOPE_RETURN_IF_ERROR(make_writable(table, n));
    Chunk chunk{slot, table.length(), n, all_logits ? n : last_chunk ? 1 : 0, nullptr, table.blocks()};
    if (chunk.n_logits > 0) chunk.logits = all_logits ? logits + static_cast<int64_t>(done) * c.n_vocab : logits;
    INFERSCOPE_RETURN_IF_ERROR(ops_->begin_chunk(chunk));
    const Status recorded = run_chunk(chunk, tokens.subspan(done, static_cast<size_t>(n)));
    if (!recorded) {
      INFERSCOPE_RETURN_IF_ERROR(ops_->discard_chunk());
      return recorded;
    }
    INFERSCOPE_RETURN_IF_ERROR(ops_->end_chunk(chunk));
    table.commit(n);
    auto& held = tokens_[static_cast<size_t>(slot)];
    held.insert(held.end(), tokens.begin() + static_cast<std::ptrdiff_t>(done),
                tokens.begin() + static_cast<std::ptrdiff_t>(done) + n);
    table.publish_full_blocks(held, prefix_seed_);
    done += static_cast<size_t>(n);
  }
  forward_calls_ += 1;
  return Status::ok();
}

// The model file, the KV types, the RoPE settings and the block size: two blocks of the same
// tokens hold the same rows only when all of these agree.
uint64_t ForwardPass::seed_for_prefixes() const {
  const kernels::RopeParams& r = plan_.rope;
  const std::string file = model_->file().path() + ":" + std::to_string(model_->file().file_size());
  const std::string rope = std::to_string(r.freq_base) + "," + std::to_string(r.freq_scale) + "," +
                           std::to_string(r.attn_factor) + "," + std::to_string(r.yarn_ext_factor) + "," +
                           std::to_string(plan_.n_ctx);
  const std::string kv = kv_types_label(plan_.kv.types) + "/" + std::to_string(plan_.kv.block_size);
  const std::string_view parts[] = {file, rope, kv};
  return prefix_seed(parts);
}

void ForwardPass::clear() {
  for (int s = 0; s < n_slots(); ++s) truncate(s, 0);
}

void ForwardPass::truncate(int slot, int64_t length) {
  BlockTable& t = tables_[static_cast<size_t>(slot)];
  const int64_t n = std::clamp<int64_t>(length, 0, t.length());
  t.truncate(n);
  tokens_[static_cast<size_t>(slot)].resize(static_cast<size_t>(n));
}

int64_t ForwardPass::reuse_prefix(int slot, std::span<const int32_t> tokens) {
  truncate(slot, 0);  // its full blocks stay cached, keyed by their prefix
  const int64_t n = tables_[static_cast<size_t>(slot)].adopt_prefix(tokens, prefix_seed_);
  tokens_[static_cast<size_t>(slot)].assign(tokens.begin(), tokens.begin() + n);
  return n;
}

KvBlockStats ForwardPass::kv_blocks() const {
  const BlockCounts c = pool_->counts();
  KvBlockStats s{pool_->block_size(), c.referenced, c.cached, c.free, 0, 0, pool_->hits(), pool_->lookups()};
  // A block shared by several slots counts once, with the most rows any of them uses.
  std::unordered_map<BlockId, int64_t> used_rows;
  const int64_t bs = pool_->block_size();
  for (const BlockTable& t : tables_) {
    for (size_t i = 0; i < t.blocks().size(); ++i) {
      int64_t& rows = used_rows[t.blocks()[i]];
      rows = std::max(rows, std::clamp<int64_t>(t.length() - static_cast<int64_t>(i) * bs, 0, bs));
    }
  }
  for (const auto& [id, rows] : used_rows) s.positions_held += rows;
  s.positions_in_blocks = static_cast<int64_t>(used_rows.size()) * bs;
  return s;
}

// Gives the table the blocks its next n positions go to, and the backend the rows to copy for
// a shared block written into (copy-on-write).
Status ForwardPass::make_writable(BlockTable& table, int64_t n) {
  std::vector<BlockCopy> copies;
  if (!table.prepare_write(n, &copies)) {
    const BlockCounts c = pool_->counts();
    return Status::error("the KV cache has no free block for " + std::to_string(n) + " more positions (" +
                         std::to_string(c.referenced) + " of " + std::to_string(pool_->n_blocks()) +
                         " blocks in use)");
  }
  return copies.empty() ? Status::ok() : ops_->kv_copy(copies);
}

ExecutorCounters ForwardPass::counters() const {
  ExecutorCounters c = ops_->counters();
  c.forward_calls = forward_calls_;
  return c;
}

Status ForwardPass::run_chunk(const Chunk& chunk, std::span<const int32_t> tokens) {
  const ModelWeights& w = model_->weights();
  INFERSCOPE_RETURN_IF_ERROR(ops_->embed(tokens, at(OpKind::Embed)));
  for (int64_t il = 0; il < model_->config().n_layer; ++il) {
    const LayerWeights& l = w.layers[static_cast<size_t>(il)];
    INFERSCOPE_RETURN_IF_ERROR(attention_block(l, il, chunk));
    INFERSCOPE_RETURN_IF_ERROR(ffn_block(l, il, chunk.n));
  }
  return chunk.n_logits > 0 ? logits(chunk) : Status::ok();
}

Status ForwardPass::attention_block(const LayerWeights& l, int64_t il, const Chunk& chunk) {
  const ModelConfig& c = model_->config();
  const int64_t n = chunk.n;
  const WeightMatrix* qkv[] = {&l.wq, &l.wk, &l.wv};
  INFERSCOPE_RETURN_IF_ERROR(ops_->rms_norm(Act::X, 0, l.attn_norm, Act::H, n, qkv, at(OpKind::Norm, il)));
  const MatmulOutput projections[] = {{&l.wq, Act::Q}, {&l.wk, Act::K}, {&l.wv, Act::V}};
  INFERSCOPE_RETURN_IF_ERROR(ops_->matmul(projections, Act::H, n, at(OpKind::Matmul, il)));
  for (auto [bias, act] : {std::pair{&l.bq, Act::Q}, {&l.bk, Act::K}, {&l.bv, Act::V}}) {
    if (bias->present()) INFERSCOPE_RETURN_IF_ERROR(ops_->add_bias(act, *bias, n, at(OpKind::Rope, il)));
  }
  INFERSCOPE_RETURN_IF_ERROR(ops_->rope(chunk, at(OpKind::Rope, il)));
  INFERSCOPE_RETURN_IF_ERROR(ops_->kv_store(il, chunk, at(OpKind::Rope, il)));
  const AttentionShape shape{c.attn_scale, c.attn_softcap, c.uses_sliding_window(il) ? c.n_swa : 0};
  const WeightMatrix* wo[] = {&l.wo};
  INFERSCOPE_RETURN_IF_ERROR(ops_->attention(il, chunk, shape, wo, at(OpKind::Attention, il)));
  const MatmulOutput out[] = {{&l.wo, Act::H}};
  INFERSCOPE_RETURN_IF_ERROR(ops_->matmul(out, Act::Attn, n, at(OpKind::Matmul, il)));
  if (l.attn_post_norm.present()) {
    INFERSCOPE_RETURN_IF_ERROR(ops_->rms_norm(Act::H, 0, l.attn_post_norm, Act::H, n, {}, at(OpKind::Norm, il)));
  }
  return ops_->add(Act::X, Act::H, n, c.n_embd, at(OpKind::Ffn, il));
}

Status ForwardPass::ffn_block(const LayerWeights& l, int64_t il, int64_t n) {
  const ModelConfig& c = model_->config();
  // The normalized rows feed the dense FFN, or the router, the experts and the shared expert.
  const WeightMatrix* consumers[] = {&l.ffn_gate,      &l.ffn_up,      &l.ffn_gate_inp,  &l.ffn_gate_exps,
                                     &l.ffn_up_exps,   &l.ffn_gate_shexp, &l.ffn_up_shexp};
  INFERSCOPE_RETURN_IF_ERROR(ops_->rms_norm(Act::X, 0, l.ffn_norm, Act::H, n, consumers, at(OpKind::Norm, il)));
  if (c.is_moe()) {
    INFERSCOPE_RETURN_IF_ERROR(moe_ffn(l, il, n));
  } else {
    const MatmulOutput gate_up[] = {{&l.ffn_gate, Act::FfnA}, {&l.ffn_up, Act::FfnB}};
    INFERSCOPE_RETURN_IF_ERROR(ops_->matmul(gate_up, Act::H, n, at(OpKind::Matmul, il)));
    const WeightMatrix* down[] = {&l.ffn_down};
    INFERSCOPE_RETURN_IF_ERROR(ops_->glu(c.ffn_activation, n, l.ffn_gate.rows, down, at(OpKind::Ffn, il)));
    const MatmulOutput out[] = {{&l.ffn_down, Act::FfnOut}};
    INFERSCOPE_RETURN_IF_ERROR(ops_->matmul(out, Act::FfnA, n, at(OpKind::Matmul, il)));
  }
  if (l.ffn_post_norm.present()) {
    INFERSCOPE_RETURN_IF_ERROR(ops_->rms_norm(Act::FfnOut, 0, l.ffn_post_norm, Act::FfnOut, n, {}, at(OpKind::Norm, il)));
  }
  return ops_->add(Act::X, Act::FfnOut, n, c.n_embd, at(OpKind::Ffn, il));
}

// Routed experts (and qwen2moe's shared expert, gated per token), from H into FfnOut.
Status ForwardPass::moe_ffn(const LayerWeights& l, int64_t il, int64_t n) {
  const ModelConfig& c = model_->config();
  const int64_t k = c.n_expert_used;
  const MatmulOutput router[] = {{&l.ffn_gate_inp, Act::Router}};
  INFERSCOPE_RETURN_IF_ERROR(ops_->matmul(router, Act::H, n, at(OpKind::Matmul, il)));
  INFERSCOPE_RETURN_IF_ERROR(ops_->moe_route(n, c.n_expert, k, c.gating == ExpertGating::SoftmaxTopKRenormalized,
                                             at(OpKind::Moe, il)));
  INFERSCOPE_RETURN_IF_ERROR(
      ops_->moe_experts(l.ffn_gate_exps, l.ffn_up_exps, l.ffn_down_exps, n, k, at(OpKind::Matmul, il)));
  if (!l.ffn_gate_shexp.present()) return ops_->moe_combine(n, k, nullptr, at(OpKind::Moe, il));
  const MatmulOutput gate_up[] = {{&l.ffn_gate_shexp, Act::FfnA}, {&l.ffn_up_shexp, Act::FfnB}};
  INFERSCOPE_RETURN_IF_ERROR(ops_->matmul(gate_up, Act::H, n, at(OpKind::Matmul, il)));
  const WeightMatrix* down[] = {&l.ffn_down_shexp};
  INFERSCOPE_RETURN_IF_ERROR(ops_->glu(FfnActivation::Silu, n, l.ffn_gate_shexp.rows, down, at(OpKind::Ffn, il)));
  const MatmulOutput out[] = {{&l.ffn_down_shexp, Act::SharedOut}};
  INFERSCOPE_RETURN_IF_ERROR(ops_->matmul(out, Act::FfnA, n, at(OpKind::Matmul, il)));
  return ops_->moe_combine(n, k, &l.ffn_gate_inp_shexp, at(OpKind::Moe, il));
}

// Logits of the chunk's last n_logits tokens.
Status ForwardPass::logits(const Chunk& chunk) {
  const ModelConfig& c = model_->config();
  const ModelWeights& w = model_->weights();
  const WeightMatrix* output[] = {&w.output};
  INFERSCOPE_RETURN_IF_ERROR(ops_->rms_norm(Act::X, chunk.n - chunk.n_logits, w.output_norm, Act::H, chunk.n_logits,
                                            output, at(OpKind::Norm)));
  const MatmulOutput out[] = {{&w.output, Act::Logits}};
  INFERSCOPE_RETURN_IF_ERROR(ops_->matmul(out, Act::H, chunk.n_logits, at(OpKind::Output)));
  if (c.final_softcap <= 0.0f) return Status::ok();
  return ops_->softcap(Act::Logits, chunk.n_logits, c.n_vocab, c.final_softcap, at(OpKind::Output));
}

// Slot i becomes a fork of slot parents[i]: it shares the parent's blocks, copied only when
// written (the partial last block).
Status ForwardPass::reorder(std::span<const int32_t> parents) {
  if (parents.size() != tables_.size()) return Status::error("reorder needs one parent per slot");
  for (int32_t p : parents) {
    if (p < 0 || p >= n_slots()) return Status::error("reorder parent out of range");
  }
  std::vector<BlockTable> forks;
  std::vector<std::vector<int32_t>> tokens;
  forks.reserve(tables_.size());
  for (int32_t p : parents) {
    forks.push_back(tables_[static_cast<size_t>(p)].fork());
    tokens.push_back(tokens_[static_cast<size_t>(p)]);
  }
  tables_ = std::move(forks);
  tokens_ = std::move(tokens);
  return Status::ok();
}

}  // namespace inferscope
