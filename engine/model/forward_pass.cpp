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
  // An encoder's sequence is one chunk: room for a whole context.
  const int64_t batch = c.is_encoder() ? std::max(options.max_batch, plan.n_ctx) : options.max_batch;
  plan.max_batch = std::max<int64_t>(1, std::min(batch, fp->ops_->max_batch_limit()));
  fp->hidden_states_ = options.hidden_states && !c.is_encoder();
  plan.output_width = c.is_encoder() || options.hidden_states ? c.n_embd : c.n_vocab;
  INFERSCOPE_RETURN_IF_ERROR(check_kv_block_size(options.kv_block_size));
  plan.kv = KvLayout::for_model(c, plan.n_ctx, plan.n_slots, options.kv_types, options.kv_block_size);
  // Before anything is sized by the rows: a type the rows cannot hold has rows of 0 bytes.
  INFERSCOPE_RETURN_IF_ERROR(check_kv_types(c, plan.kv.types));
  plan.scratch = ScratchPlan::for_model(c, plan.n_ctx, plan.max_batch, fp->ops_->threads());
  plan.rope = rope_params_for_context(c, fp->model_->weights(), plan.n_ctx);
  plan.profile = &fp->profile_;
  plan.kv.n_blocks += static_cast<int64_t>(options.kv_cache_budget_bytes / plan.kv.bytes_per_block());
  fp->pool_ = std::make_unique<BlockPool>(static_cast<int32_t>(plan.kv.n_blocks), plan.kv.block_size);
  for (int s = 0; s < plan.n_slots; ++s) fp->tables_.emplace_back(*fp->pool_);
  fp->tokens_.resize(static_cast<size_t>(plan.n_slots));
  fp->shifted_.assign(static_cast<size_t>(plan.n_slots), false);
  fp->shallow_.assign(static_cast<size_t>(plan.n_slots), {});
  INFERSCOPE_RETURN_IF_ERROR(fp->set_kv_window(options.kv_window, options.kv_sinks));
  fp->prefix_seed_ = fp->seed_for_prefixes();
  INFERSCOPE_RETURN_IF_ERROR(fp->ops_->supports(plan));
  INFERSCOPE_RETURN_IF_ERROR(fp->fit_check());
  INFERSCOPE_RETURN_IF_ERROR(fp->ops_->upload(options.on_upload_progress));
  INFERSCOPE_RETURN_IF_ERROR(fp->ops_->allocate(plan));
  if (fp->ops_->records()) INFERSCOPE_RETURN_IF_ERROR(fp->warm_up());
  return fp;
}

// The window needs room in the context for its sink blocks, the window, the blocks waiting to
// leave and one more block being written.
Status ForwardPass::set_kv_window(int64_t window, int64_t sinks) {
  if (window < 0 || sinks < 0) return Status::error("the KV window and its sinks must be >= 0");
  kv_window_ = window;
  kv_sinks_ = sinks;
  if (window == 0) return Status::ok();
  const int64_t bs = plan_.kv.block_size;
  const int64_t step = std::max<int64_t>(1, window / (4 * bs));
  const int64_t needed = (sink_blocks() + step + 1) * bs + window;
  if (needed > plan_.n_ctx) {
    return Status::error("--kv-window " + std::to_string(window) + " with " + std::to_string(sinks) +
                         " sinks needs a context of at least " + std::to_string(needed) + " positions (the context is " +
                         std::to_string(plan_.n_ctx) + ")");
  }
  return Status::ok();
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
    const ChunkSpan span{0, 0, n, scratch.blocks()};
    const Chunk chunk{std::span(&span, 1), n, n, nullptr};
    INFERSCOPE_RETURN_IF_ERROR(ops_->begin_chunk(chunk));
    const Status recorded = run_chunk(chunk, std::span(tokens).first(static_cast<size_t>(n)));
    INFERSCOPE_RETURN_IF_ERROR(ops_->discard_chunk());
    INFERSCOPE_RETURN_IF_ERROR(recorded);
  }
  return Status::ok();
}

// A sequence of a forward call: its tokens, how many are done, and how many the chunk being
// built takes.
struct ForwardPass::Pending {
  int slot = 0;
  std::span<const int32_t> tokens;
  float* logits = nullptr;  // its last token's; null when the caller wants every token's
  size_t done = 0;
  int64_t take = 0;
};

Status ForwardPass::forward(int slot, std::span<const int32_t> tokens, bool all_logits, float* logits) {
  const int64_t n_layer = model_->config().n_layer;
  const SequenceTokens sequence{slot, tokens, logits};
  INFERSCOPE_RETURN_IF_ERROR(check_input(std::span(&sequence, 1), n_layer));
  if (model_->config().is_encoder()) INFERSCOPE_RETURN_IF_ERROR(check_encoder_input(slot, tokens.size(), all_logits));
  Pending pending{slot, tokens, all_logits ? nullptr : logits};
  return run_sequences(std::span(&pending, 1), all_logits ? logits : nullptr, {n_layer, false});
}

Status ForwardPass::verify(int slot, std::span<const int32_t> tokens, float* logits) {
  if (model_->config().is_encoder()) return Status::error("an encoder does not decode: nothing to verify");
  const int64_t n_layer = model_->config().n_layer;
  const SequenceTokens sequence{slot, tokens, logits};
  INFERSCOPE_RETURN_IF_ERROR(check_input(std::span(&sequence, 1), n_layer));
  Pending pending{slot, tokens, nullptr};
  return run_sequences(std::span(&pending, 1), logits, {n_layer, true});
}

Status ForwardPass::forward_layers(int slot, std::span<const int32_t> tokens, int64_t n_layers, float* logits) {
  const ModelConfig& c = model_->config();
  if (c.is_encoder()) return Status::error("an encoder cannot draft for itself: it reads a whole sequence at once");
  if (n_layers < 1 || n_layers > c.n_layer) {
    return Status::error("a self-draft runs through 1 to " + std::to_string(c.n_layer) + " layers of this model, not " +
                         std::to_string(n_layers));
  }
  if (kv_window_ > 0) return Status::error("a self-draft does not run with a KV window");
  if (!logits) return Status::error("a self-draft needs a place for its logits");
  const SequenceTokens sequence{slot, tokens, logits};
  INFERSCOPE_RETURN_IF_ERROR(check_input(std::span(&sequence, 1), n_layers));
  Pending pending{slot, tokens, logits};
  return run_sequences(std::span(&pending, 1), nullptr, {n_layers, false});
}

// Bidirectional attention needs the whole sequence in one chunk of its own.
Status ForwardPass::check_encoder_input(int slot, size_t n, bool all_logits) const {
  if (!all_logits) return Status::error("an encoder outputs every token's state: call it with all_logits");
  if (kv_length(slot) != 0) return Status::error("an encoder reads a whole sequence at once, into an empty slot");
  if (static_cast<int64_t>(n) > plan_.max_batch) {
    return Status::error("the sequence of " + std::to_string(n) + " tokens is longer than the encoder's batch of " +
                         std::to_string(plan_.max_batch));
  }
  return Status::ok();
}

Status ForwardPass::forward_batch(std::span<const SequenceTokens> sequences) {
  if (sequences.empty()) return Status::error("no sequences to evaluate");
  if (model_->config().is_encoder()) return Status::error("an encoder runs one sequence per forward call");
  const int64_t n_layer = model_->config().n_layer;
  INFERSCOPE_RETURN_IF_ERROR(check_input(sequences, n_layer));
  std::vector<Pending> pending;
  for (const SequenceTokens& s : sequences) {
    if (!s.logits) return Status::error("a batched sequence needs a place for its logits");
    pending.push_back({s.slot, s.tokens, s.logits});
  }
  return run_sequences(pending, nullptr, {n_layer, false});
}

// Also refuses a call through more layers than a self-draft's positions of the slot hold.
Status ForwardPass::check_input(std::span<const SequenceTokens> sequences, int64_t n_layers) const {
  const ModelConfig& c = model_->config();
  std::vector<bool> seen(tables_.size());
  for (const SequenceTokens& s : sequences) {
    if (s.slot < 0 || s.slot >= n_slots()) return Status::error("sequence slot out of range");
    if (seen[static_cast<size_t>(s.slot)]) return Status::error("a slot appears twice in one forward call");
    seen[static_cast<size_t>(s.slot)] = true;
    if (s.tokens.empty()) return Status::error("no tokens to evaluate");
    const int64_t length = kv_length(s.slot);
    const ShallowRows& shallow = shallow_[static_cast<size_t>(s.slot)];
    if (shallow.layers > 0 && n_layers > shallow.layers) {
      return Status::error("internal: positions " + std::to_string(shallow.from) + " to " + std::to_string(length - 1) +
                           " of slot " + std::to_string(s.slot) + " hold the KV of their first " +
                           std::to_string(shallow.layers) + " layers only (a self-draft's); truncate them before a call through " +
                           std::to_string(n_layers) + " layers");
    }
    if (kv_window_ == 0 && length + static_cast<int64_t>(s.tokens.size()) > plan_.n_ctx) {
      return Status::error("context is full: " + std::to_string(length) + " + " + std::to_string(s.tokens.size()) +
                           " tokens exceed the context length of " + std::to_string(plan_.n_ctx) +
                           " (use a larger --context, --kv-window or --context-shift)");
    }
    for (int32_t t : s.tokens) {
      if (t < 0 || t >= c.n_vocab) {
        return Status::error("token id " + std::to_string(t) + " is outside the vocabulary (0.." +
                             std::to_string(c.n_vocab - 1) + ")");
      }
    }
  }
  return Status::ok();
}

Status ForwardPass::run_sequences(std::span<Pending> pending, float* all_logits, CallShape shape) {
  const auto unfinished = [&] {
    return std::any_of(pending.begin(), pending.end(), [](const Pending& p) { return p.done < p.tokens.size(); });
  };
  while (unfinished()) INFERSCOPE_RETURN_IF_ERROR(next_chunk(pending, all_logits, shape));
  forward_calls_ += 1;
  return Status::ok();
}

// Fills a chunk with up to max_batch rows of the sequences in order, each one's last token among
// the chunk's last rows (where the logits come from), runs it as `shape` says and commits the
// rows.
Status ForwardPass::next_chunk(std::span<Pending> pending, float* all_logits, CallShape shape) {
  const int64_t width = plan_.output_width;
  int64_t room = plan_.max_batch;
  for (Pending& p : pending) {
    p.take = 0;
    const int64_t left = static_cast<int64_t>(p.tokens.size() - p.done);
    if (left == 0 || room == 0) continue;
    int64_t n = std::min(left, room);
    if (kv_window_ > 0) {
      INFERSCOPE_RETURN_IF_ERROR(slide_window(p.slot, n));
      n = std::min(n, plan_.n_ctx - kv_length(p.slot));
      if (n < 1) return Status::error("internal: the KV window left no room in the context");
    }
    p.take = n;
    room -= n;
  }
  for (Pending& p : pending) {
    if (p.take > 0) INFERSCOPE_RETURN_IF_ERROR(make_writable(tables_[static_cast<size_t>(p.slot)], p.take));
  }
  const auto finishing = [](const Pending& p) { return p.logits && p.done + static_cast<size_t>(p.take) == p.tokens.size(); };
  chunk_spans_.clear();
  chunk_tokens_.clear();
  for (const Pending& p : pending) {
    const int64_t body = p.take - (finishing(p) ? 1 : 0);
    if (p.take == 0 || body == 0) continue;
    const BlockTable& t = tables_[static_cast<size_t>(p.slot)];
    chunk_spans_.push_back({p.slot, t.length(), body, t.blocks()});
    chunk_tokens_.insert(chunk_tokens_.end(), p.tokens.begin() + static_cast<std::ptrdiff_t>(p.done),
                         p.tokens.begin() + static_cast<std::ptrdiff_t>(p.done) + body);
  }
  std::vector<float*> destinations;
  for (const Pending& p : pending) {
    if (p.take == 0 || !finishing(p)) continue;
    const BlockTable& t = tables_[static_cast<size_t>(p.slot)];
    chunk_spans_.push_back({p.slot, t.length() + p.take - 1, 1, t.blocks()});
    chunk_tokens_.push_back(p.tokens[p.done + static_cast<size_t>(p.take) - 1]);
    destinations.push_back(p.logits);
  }
  Chunk chunk{chunk_spans_, static_cast<int64_t>(chunk_tokens_.size()), static_cast<int64_t>(destinations.size()),
              nullptr, shape.n_layers, shape.batch_invariant};
  if (all_logits) {
    chunk.n_logits = chunk.n;
    chunk.logits = all_logits + static_cast<int64_t>(pending[0].done) * width;
  } else if (destinations.size() == 1) {
    chunk.logits = destinations[0];
  } else if (!destinations.empty()) {
    chunk_logits_.resize(destinations.size() * static_cast<size_t>(width));
    chunk.logits = chunk_logits_.data();
  }
  INFERSCOPE_RETURN_IF_ERROR(ops_->begin_chunk(chunk));
  const Status recorded = run_chunk(chunk, chunk_tokens_);
  if (!recorded) {
    INFERSCOPE_RETURN_IF_ERROR(ops_->discard_chunk());
    return recorded;
  }
  INFERSCOPE_RETURN_IF_ERROR(ops_->end_chunk(chunk));
  if (destinations.size() > 1) {
    for (size_t i = 0; i < destinations.size(); ++i) {
      std::copy_n(chunk_logits_.data() + i * static_cast<size_t>(width), width, destinations[i]);
    }
  }
  for (Pending& p : pending) {
    if (p.take > 0) commit_rows(p, shape.n_layers);
  }
  return Status::ok();
}

// The chunk wrote p.take rows of `p` through the first n_layers layers: the slot holds them, and
// full blocks whose every row has every layer are offered to the prefix cache.
void ForwardPass::commit_rows(Pending& p, int64_t n_layers) {
  const auto slot = static_cast<size_t>(p.slot);
  BlockTable& table = tables_[slot];
  ShallowRows& shallow = shallow_[slot];
  if (n_layers < model_->config().n_layer) {
    shallow = shallow.layers == 0 ? ShallowRows{table.length(), n_layers}
                                  : ShallowRows{shallow.from, std::min(shallow.layers, n_layers)};
  }
  table.commit(p.take);
  auto& held = tokens_[slot];
  const auto from = p.tokens.begin() + static_cast<std::ptrdiff_t>(p.done);
  held.insert(held.end(), from, from + p.take);
  // An encoder's keys depend on the tokens after them too: never a reusable prefix.
  const bool reusable = model_->config().causal && !shifted_[slot] && shallow.layers == 0;
  if (reusable) table.publish_full_blocks(held, prefix_seed_);
  p.done += static_cast<size_t>(p.take);
}

// Blocks holding the attention sinks (kept by the window and by context shift).
int64_t ForwardPass::sink_blocks() const {
  const int64_t bs = plan_.kv.block_size;
  return (kv_sinks_ + bs - 1) / bs;
}

// Before n more positions of `slot`: drops the blocks after the sinks that no query sees any
// more (every row more than kv_window behind the next position), once they are a quarter
// window's worth (each kept key is re-rotated about four times in its life) or the context
// needs the room.
Status ForwardPass::slide_window(int slot, int64_t n) {
  const int64_t bs = plan_.kv.block_size, length = kv_length(slot);
  const int64_t dead = std::max<int64_t>(0, std::max<int64_t>(0, length - kv_window_ + 1) / bs - sink_blocks());
  if (dead == 0) return Status::ok();
  const int64_t step = std::max<int64_t>(1, kv_window_ / (4 * bs));
  if (dead < step && length + n <= plan_.n_ctx) return Status::ok();
  return drop_blocks(slot, static_cast<size_t>(sink_blocks()), static_cast<size_t>(dead));
}

Status ForwardPass::shift_context(int slot) {
  if (slot < 0 || slot >= n_slots()) return Status::error("sequence slot out of range");
  if (shallow_[static_cast<size_t>(slot)].layers > 0) {
    return Status::error("internal: context shift with a self-draft's positions in the slot (truncate them first)");
  }
  const int64_t full = kv_length(slot) / plan_.kv.block_size;
  const int64_t drop = (full - sink_blocks()) / 2;
  if (drop < 1) return Status::error("context shift: no whole block after the attention sinks to drop");
  return drop_blocks(slot, static_cast<size_t>(sink_blocks()), static_cast<size_t>(drop));
}

// Removes blocks [first, first + count) of `slot`; the later ones move down and their keys are
// re-rotated for their new positions.
Status ForwardPass::drop_blocks(int slot, size_t first, size_t count) {
  BlockTable& table = tables_[static_cast<size_t>(slot)];
  std::vector<BlockCopy> copies;
  std::vector<BlockId> moved;
  if (!table.drop_blocks(first, count, &copies, &moved)) {
    return Status::error("the KV cache has no free block to move a shared block of the sliding window into");
  }
  if (!copies.empty()) INFERSCOPE_RETURN_IF_ERROR(ops_->kv_copy(copies));
  const int64_t bs = plan_.kv.block_size;
  if (!moved.empty()) INFERSCOPE_RETURN_IF_ERROR(ops_->kv_rotate(moved, -static_cast<int64_t>(count) * bs));
  auto& held = tokens_[static_cast<size_t>(slot)];
  held.erase(held.begin() + static_cast<std::ptrdiff_t>(first) * bs,
             held.begin() + static_cast<std::ptrdiff_t>(first + count) * bs);
  shifted_[static_cast<size_t>(slot)] = true;
  return Status::ok();
}

// The model's own sliding window where a layer has one (its semantics kept), else the KV
// window policy with its sinks, else all positions.
AttentionShape ForwardPass::attention_shape(int64_t layer) const {
  const ModelConfig& c = model_->config();
  AttentionShape shape{c.attn_scale, c.attn_softcap, c.uses_sliding_window(layer) ? c.n_swa : 0, 0, c.causal};
  if (kv_window_ > 0 && (shape.window == 0 || kv_window_ < shape.window)) {
    shape.window = kv_window_;
    shape.sinks = kv_sinks_;
  }
  return shape;
}

// The model file, the KV types, the RoPE settings and the block size: two blocks of the same
// tokens hold the same rows only when all of these agree.
uint64_t ForwardPass::seed_for_prefixes() const {
  const kernels::RopeParams& r = plan_.rope;
  const std::string file = model_->file_identity();
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

void ForwardPass::clear_with_prefixes() {
  clear();
  const int32_t limit = pool_->cache_limit();
  pool_->set_cache_limit(0);
  pool_->set_cache_limit(limit);
}

void ForwardPass::truncate(int slot, int64_t length) {
  BlockTable& t = tables_[static_cast<size_t>(slot)];
  const int64_t n = std::clamp<int64_t>(length, 0, t.length());
  t.truncate(n);
  tokens_[static_cast<size_t>(slot)].resize(static_cast<size_t>(n));
  if (n == 0) shifted_[static_cast<size_t>(slot)] = false;
  if (n <= shallow_[static_cast<size_t>(slot)].from) shallow_[static_cast<size_t>(slot)] = {};
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
  if (model_->config().is_encoder()) return run_encoder_chunk(chunk, tokens);
  const ModelWeights& w = model_->weights();
  INFERSCOPE_RETURN_IF_ERROR(ops_->embed(tokens, at(OpKind::Embed)));
  const int64_t n_layers = chunk.n_layers > 0 ? chunk.n_layers : model_->config().n_layer;
  for (int64_t il = 0; il < n_layers; ++il) {
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
  const AttentionShape shape = attention_shape(il);
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

// Token rows, then each row's position and token type (0) added, normalized.
Status ForwardPass::run_encoder_chunk(const Chunk& chunk, std::span<const int32_t> tokens) {
  const ModelWeights& w = model_->weights();
  chunk_positions_.clear();
  for (const ChunkSpan& s : chunk.spans) {
    for (int64_t t = 0; t < s.n; ++t) chunk_positions_.push_back(static_cast<int32_t>(s.pos0 + t));
  }
  chunk_token_types_.assign(tokens.size(), 0);
  INFERSCOPE_RETURN_IF_ERROR(ops_->embed(tokens, at(OpKind::Embed)));
  INFERSCOPE_RETURN_IF_ERROR(ops_->add_rows(w.position_embd, chunk_positions_, at(OpKind::Embed)));
  INFERSCOPE_RETURN_IF_ERROR(ops_->add_rows(w.token_types, chunk_token_types_, at(OpKind::Embed)));
  INFERSCOPE_RETURN_IF_ERROR(
      ops_->layer_norm(Act::X, 0, w.token_embd_norm, w.token_embd_norm_b, Act::X, chunk.n, {}, at(OpKind::Embed)));
  for (int64_t il = 0; il < model_->config().n_layer; ++il) {
    INFERSCOPE_RETURN_IF_ERROR(encoder_layer(w.layers[static_cast<size_t>(il)], il, chunk));
  }
  return Status::ok();
}

// One post-norm BERT layer on X; the last layer's final norm writes the output rows instead.
Status ForwardPass::encoder_layer(const LayerWeights& l, int64_t il, const Chunk& chunk) {
  const ModelConfig& c = model_->config();
  const int64_t n = chunk.n;
  const MatmulOutput projections[] = {{&l.wq, Act::Q}, {&l.wk, Act::K}, {&l.wv, Act::V}};
  INFERSCOPE_RETURN_IF_ERROR(ops_->matmul(projections, Act::X, n, at(OpKind::Matmul, il)));
  for (auto [bias, act] : {std::pair{&l.bq, Act::Q}, {&l.bk, Act::K}, {&l.bv, Act::V}}) {
    INFERSCOPE_RETURN_IF_ERROR(ops_->add_bias(act, *bias, n, at(OpKind::Matmul, il)));
  }
  INFERSCOPE_RETURN_IF_ERROR(ops_->kv_store(il, chunk, at(OpKind::Attention, il)));
  const WeightMatrix* wo[] = {&l.wo};
  INFERSCOPE_RETURN_IF_ERROR(ops_->attention(il, chunk, attention_shape(il), wo, at(OpKind::Attention, il)));
  const MatmulOutput out[] = {{&l.wo, Act::H}};
  INFERSCOPE_RETURN_IF_ERROR(ops_->matmul(out, Act::Attn, n, at(OpKind::Matmul, il)));
  INFERSCOPE_RETURN_IF_ERROR(ops_->add_bias(Act::H, l.bo, n, at(OpKind::Matmul, il)));
  INFERSCOPE_RETURN_IF_ERROR(ops_->add(Act::X, Act::H, n, c.n_embd, at(OpKind::Ffn, il)));
  const WeightMatrix* up[] = {&l.ffn_up};
  INFERSCOPE_RETURN_IF_ERROR(
      ops_->layer_norm(Act::X, 0, l.attn_output_norm, l.attn_output_norm_b, Act::X, n, up, at(OpKind::Norm, il)));
  const MatmulOutput ffn_up[] = {{&l.ffn_up, Act::FfnA}};
  INFERSCOPE_RETURN_IF_ERROR(ops_->matmul(ffn_up, Act::X, n, at(OpKind::Matmul, il)));
  INFERSCOPE_RETURN_IF_ERROR(ops_->add_bias(Act::FfnA, l.ffn_up_b, n, at(OpKind::Ffn, il)));
  const WeightMatrix* down[] = {&l.ffn_down};
  INFERSCOPE_RETURN_IF_ERROR(ops_->activate(c.ffn_activation, Act::FfnA, n, c.n_ff, down, at(OpKind::Ffn, il)));
  const MatmulOutput ffn_down[] = {{&l.ffn_down, Act::FfnOut}};
  INFERSCOPE_RETURN_IF_ERROR(ops_->matmul(ffn_down, Act::FfnA, n, at(OpKind::Matmul, il)));
  INFERSCOPE_RETURN_IF_ERROR(ops_->add_bias(Act::FfnOut, l.ffn_down_b, n, at(OpKind::Ffn, il)));
  INFERSCOPE_RETURN_IF_ERROR(ops_->add(Act::X, Act::FfnOut, n, c.n_embd, at(OpKind::Ffn, il)));
  const bool output = il == c.n_layer - 1 && chunk.n_logits > 0;
  const WeightMatrix* next[] = {&l.wq, &l.wk, &l.wv};
  if (!output) {
    return ops_->layer_norm(Act::X, 0, l.layer_output_norm, l.layer_output_norm_b, Act::X, n, next,
                            at(OpKind::Norm, il));
  }
  return ops_->layer_norm(Act::X, n - chunk.n_logits, l.layer_output_norm, l.layer_output_norm_b, Act::Logits,
                          chunk.n_logits, {}, at(OpKind::Output));
}

// Logits of the chunk's last n_logits tokens (or their normalized states, hidden_states).
Status ForwardPass::logits(const Chunk& chunk) {
  const ModelConfig& c = model_->config();
  const ModelWeights& w = model_->weights();
  if (hidden_states_) {
    return ops_->rms_norm(Act::X, chunk.n - chunk.n_logits, w.output_norm, Act::Logits, chunk.n_logits, {},
                          at(OpKind::Output));
  }
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
  std::vector<bool> shifted;
  std::vector<ShallowRows> shallow;
  forks.reserve(tables_.size());
  for (int32_t p : parents) {
    forks.push_back(tables_[static_cast<size_t>(p)].fork());
    tokens.push_back(tokens_[static_cast<size_t>(p)]);
    shifted.push_back(shifted_[static_cast<size_t>(p)]);
    shallow.push_back(shallow_[static_cast<size_t>(p)]);
  }
  tables_ = std::move(forks);
  tokens_ = std::move(tokens);
  shifted_ = std::move(shifted);
  shallow_ = std::move(shallow);
  return Status::ok();
}

}  // namespace inferscope
