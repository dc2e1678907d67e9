#include "engine/graph/forward_pass.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "engine/backend/backend_plugin.h"
#include "engine/model/memory_estimate.h"
#include "engine/model/rope_context.h"

namespace inferscope {

Result<std::unique_ptr<ForwardExecutor>> ForwardPass::open(std::shared_ptr<const Model> model,
                                                           const BackendChoice& backend, const ForwardOptions& options) {
  auto plugin = load_backend(backend.backend);
  if (!plugin) return plugin.status();
  auto ops = (*plugin)->create_ops(model, backend.device, options.host_threads);
  if (!ops) return ops.status();
  auto pass = create(std::move(model), std::move(*ops), options);
  if (!pass) return pass.status();
  return std::unique_ptr<ForwardExecutor>(std::move(*pass));
}

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
  const bool hidden_states = options.hidden_states && !c.is_encoder();
  plan.output_width = c.is_encoder() || options.hidden_states ? c.n_embd : c.n_vocab;
  INFERSCOPE_RETURN_IF_ERROR(check_kv_block_size(options.kv_block_size));
  if (options.mtp) INFERSCOPE_RETURN_IF_ERROR(check_mtp(*fp->model_));
  fp->mtp_ = options.mtp;
  fp->mtp_draft_from_.assign(static_cast<size_t>(plan.n_slots), -1);
  const KvRowShape kv_rows = c.kv_rows(options.mtp);
  // StreamingLLM's window moves positions through every layer's blocks alike: no window pool.
  plan.kv = KvLayout::for_model(kv_rows, plan.n_ctx, plan.n_slots, options.kv_types, options.kv_block_size,
                                plan.max_batch, options.kv_window == 0);
  // Before anything is sized by the rows: a type the rows cannot hold has rows of 0 bytes.
  INFERSCOPE_RETURN_IF_ERROR(check_kv_types(kv_rows, plan.kv.types));
  plan.recurrent = c.recurrent_states(plan.n_slots, options.mtp);
  plan.acts = ActivationPlan::for_model(c, plan.n_ctx, plan.max_batch, fp->ops_->threads(), plan.output_width);
  plan.rope = rope_params_for_context(c, fp->model_->weights(), plan.n_ctx);
  plan.rope_swa = rope_params_for_window_layers(c, plan.rope);
  plan.profile = &fp->profile_;
  if (plan.kv.bytes_per_block() > 0) {
    plan.kv.n_blocks += static_cast<int64_t>(options.kv_cache_budget_bytes / plan.kv.bytes_per_block());
  }
  KvSlotsOptions slots{plan.n_slots,      plan.n_ctx,       c.n_layer, c.causal, options.kv_window,
                       options.kv_sinks, fp->seed_for_prefixes()};
  if (plan.kv.has_window_pool()) {
    slots.layer_window = c.n_swa;
    slots.window_margin = plan.max_batch;
  }
  auto kv_slots = KvSlots::create(*fp->ops_, plan.kv, slots);
  if (!kv_slots) return kv_slots.status();
  fp->slots_ = std::move(*kv_slots);
  if (!plan.recurrent.empty()) fp->states_ = std::make_unique<RecurrentStates>(*fp->ops_, plan.recurrent);
  fp->chunks_ = std::make_unique<ChunkBuilder>(*fp->slots_, plan.max_batch, plan.n_ctx, plan.output_width);
  fp->graph_ = make_chunk_graph(*fp->model_, *fp->ops_, {options.kv_window, options.kv_sinks, hidden_states, options.mtp});
  INFERSCOPE_RETURN_IF_ERROR(fp->ops_->supports(plan));
  INFERSCOPE_RETURN_IF_ERROR(fp->fit_check());
  INFERSCOPE_RETURN_IF_ERROR(fp->ops_->upload(options.on_upload_progress));
  INFERSCOPE_RETURN_IF_ERROR(fp->ops_->allocate(plan));
  if (fp->ops_->records()) INFERSCOPE_RETURN_IF_ERROR(fp->warm_up());
  return fp;
}

// MTP drafting needs the block and a hybrid model (the carried row lives with the recurrent
// state, which goes back and forks with it).
Status ForwardPass::check_mtp(const Model& model) {
  const ModelConfig& c = model.config();
  if (!c.has_mtp()) {
    return Status::error("this model has no multi-token-prediction layers (nextn_predict_layers) to draft with");
  }
  if (!c.is_hybrid()) return Status::error("MTP drafting runs for the hybrid Qwen3.5 models (qwen35, qwen35moe)");
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
    BlockTable scratch = slots_->scratch_table(KvPool::Main);
    INFERSCOPE_RETURN_IF_ERROR(slots_->make_writable(scratch, KvPool::Main, n));
    std::optional<BlockTable> window;
    if (plan_.kv.has_window_pool()) {
      window.emplace(slots_->scratch_table(KvPool::Window));
      INFERSCOPE_RETURN_IF_ERROR(slots_->make_writable(*window, KvPool::Window, n));
    }
    const ChunkSpan span{0, 0, n, scratch.blocks(), window ? window->blocks() : std::span<const BlockId>()};
    const Chunk chunk{std::span(&span, 1), n, n, nullptr};
    INFERSCOPE_RETURN_IF_ERROR(ops_->begin_chunk(chunk));
    const Status recorded = graph_->run(chunk, std::span(tokens).first(static_cast<size_t>(n)));
    INFERSCOPE_RETURN_IF_ERROR(ops_->discard_chunk());
    INFERSCOPE_RETURN_IF_ERROR(recorded);
  }
  return Status::ok();
}

Status ForwardPass::forward(int slot, std::span<const int32_t> tokens, bool all_logits, float* logits) {
  const int64_t n_layer = model_->config().n_layer;
  const SequenceTokens sequence{slot, tokens, logits};
  INFERSCOPE_RETURN_IF_ERROR(check_input(std::span(&sequence, 1), n_layer));
  if (model_->config().is_encoder()) INFERSCOPE_RETURN_IF_ERROR(check_encoder_input(slot, tokens.size(), all_logits));
  INFERSCOPE_RETURN_IF_ERROR(catch_up(slot));
  if (states_ && !all_logits && tokens.size() > 1 && !slots_->shifted(slot)) {
    return forward_prompt_with_checkpoint(slot, tokens, logits);
  }
  PendingSequence pending{slot, tokens, all_logits ? nullptr : logits};
  return run_sequences(std::span(&pending, 1), all_logits ? logits : nullptr, {n_layer, false});
}

// A hybrid model's prompt: all but its last token, a checkpoint of the state there, then the
// last token (the same prompt again can then reuse all it may).
Status ForwardPass::forward_prompt_with_checkpoint(int slot, std::span<const int32_t> tokens, float* logits) {
  const int64_t n_layer = model_->config().n_layer;
  PendingSequence body{slot, tokens.first(tokens.size() - 1), nullptr};
  INFERSCOPE_RETURN_IF_ERROR(run_sequences(std::span(&body, 1), nullptr, {n_layer, false}));
  INFERSCOPE_RETURN_IF_ERROR(states_->save(slot, slots_->tokens(slot)));
  PendingSequence last{slot, tokens.last(1), logits};
  return run_sequences(std::span(&last, 1), nullptr, {n_layer, false});
}

Status ForwardPass::catch_up(int slot) {
  if (!states_ || states_->replay(slot).empty()) return Status::ok();
  const std::vector<int32_t> tokens = std::move(states_->replay(slot));
  states_->replay(slot).clear();
  PendingSequence pending{slot, tokens, nullptr};
  return run_sequences(std::span(&pending, 1), nullptr, {model_->config().n_layer, true});
}

Status ForwardPass::verify(int slot, std::span<const int32_t> tokens, float* logits) {
  if (model_->config().is_encoder()) return Status::error("an encoder does not decode: nothing to verify");
  const int64_t n_layer = model_->config().n_layer;
  const SequenceTokens sequence{slot, tokens, logits};
  INFERSCOPE_RETURN_IF_ERROR(check_input(std::span(&sequence, 1), n_layer));
  INFERSCOPE_RETURN_IF_ERROR(catch_up(slot));
  if (states_ && !slots_->shifted(slot)) INFERSCOPE_RETURN_IF_ERROR(states_->save(slot, slots_->tokens(slot)));
  const int64_t pos0 = slots_->length(slot);
  const bool keep_rows = plan_.recurrent.n_row_states > 0 && static_cast<int64_t>(tokens.size()) <= plan_.max_batch;
  PendingSequence pending{slot, tokens, nullptr};
  INFERSCOPE_RETURN_IF_ERROR(run_sequences(std::span(&pending, 1), logits, {n_layer, true, MtpDraft::None, keep_rows}));
  if (keep_rows) {
    row_states_ = {slot, pos0, std::min<int64_t>(static_cast<int64_t>(tokens.size()), plan_.recurrent.n_row_states)};
  }
  return Status::ok();
}

Status ForwardPass::forward_layers(int slot, std::span<const int32_t> tokens, int64_t n_layers, float* logits) {
  const ModelConfig& c = model_->config();
  if (c.is_encoder()) return Status::error("an encoder cannot draft for itself: it reads a whole sequence at once");
  if (n_layers < 1 || n_layers > c.n_layer) {
    return Status::error("a self-draft runs through 1 to " + std::to_string(c.n_layer) + " layers of this model, not " +
                         std::to_string(n_layers));
  }
  if (slots_->window() > 0) return Status::error("a self-draft does not run with a KV window");
  if (states_) {
    return Status::error("a self-draft through the first layers of a hybrid model would move its recurrent "
                         "state past tokens the full model never saw; draft with another model");
  }
  if (!logits) return Status::error("a self-draft needs a place for its logits");
  const SequenceTokens sequence{slot, tokens, logits};
  INFERSCOPE_RETURN_IF_ERROR(check_input(std::span(&sequence, 1), n_layers));
  PendingSequence pending{slot, tokens, logits};
  return run_sequences(std::span(&pending, 1), nullptr, {n_layers, false});
}

Status ForwardPass::draft_mtp(int slot, int32_t token, bool first, float* logits) {
  if (!mtp_) return Status::error("this forward pass was made without the model's MTP block (ForwardOptions::mtp)");
  if (!logits) return Status::error("an MTP draft needs a place for its logits");
  if (slots_->window() > 0) return Status::error("an MTP draft does not run with a KV window");
  const SequenceTokens sequence{slot, std::span(&token, 1), logits};
  INFERSCOPE_RETURN_IF_ERROR(check_input(std::span(&sequence, 1), 0));
  INFERSCOPE_RETURN_IF_ERROR(catch_up(slot));
  int64_t& from = mtp_draft_from_[static_cast<size_t>(slot)];
  if (first != (from < 0)) {
    return Status::error(first ? "internal: an MTP draft already runs in this slot; truncate it first"
                               : "internal: an MTP draft goes on from a previous draft_mtp");
  }
  if (kv_length(slot) == 0) return Status::error("an MTP draft continues a sequence: the slot is empty");
  const int64_t start = slots_->length(slot);
  PendingSequence pending{slot, std::span(&token, 1), logits};
  INFERSCOPE_RETURN_IF_ERROR(
      run_sequences(std::span(&pending, 1), nullptr, {0, false, first ? MtpDraft::First : MtpDraft::Next}));
  if (first) from = start;
  return Status::ok();
}

Status ForwardPass::forward_batch(std::span<const SequenceTokens> sequences) {
  if (sequences.empty()) return Status::error("no sequences to evaluate");
  if (model_->config().is_encoder()) return Status::error("an encoder runs one sequence per forward call");
  const int64_t n_layer = model_->config().n_layer;
  INFERSCOPE_RETURN_IF_ERROR(check_input(sequences, n_layer));
  std::vector<PendingSequence> pending;
  for (const SequenceTokens& s : sequences) INFERSCOPE_RETURN_IF_ERROR(catch_up(s.slot));
  for (const SequenceTokens& s : sequences) {
    if (!s.logits) return Status::error("a batched sequence needs a place for its logits");
    pending.push_back({s.slot, s.tokens, s.logits});
  }
  return run_sequences(pending, nullptr, {n_layer, false});
}

// Also refuses a call through more layers than a self-draft's positions of the slot hold.
Status ForwardPass::check_input(std::span<const SequenceTokens> sequences, int64_t n_layers) {
  row_states_ = {};  // a call moves the states on: the last verification's no longer follow its slot
  const ModelConfig& c = model_->config();
  std::vector<bool> seen(static_cast<size_t>(n_slots()));
  for (const SequenceTokens& s : sequences) {
    if (s.slot < 0 || s.slot >= n_slots()) return Status::error("sequence slot out of range");
    if (seen[static_cast<size_t>(s.slot)]) return Status::error("a slot appears twice in one forward call");
    seen[static_cast<size_t>(s.slot)] = true;
    if (s.tokens.empty()) return Status::error("no tokens to evaluate");
    INFERSCOPE_RETURN_IF_ERROR(slots_->check_depth(s.slot, n_layers));
    const int64_t length = kv_length(s.slot);
    if (slots_->window() == 0 && length + static_cast<int64_t>(s.tokens.size()) > plan_.n_ctx) {
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

Status ForwardPass::run_sequences(std::span<PendingSequence> pending, float* all_logits, CallShape shape) {
  const auto unfinished = [&] { return std::any_of(pending.begin(), pending.end(), [](auto& p) { return p.unfinished(); }); };
  while (unfinished()) {
    auto chunk = chunks_->next(pending, all_logits, shape);
    if (!chunk) return chunk.status();
    INFERSCOPE_RETURN_IF_ERROR(run_chunk(*chunk, chunks_->tokens()));
    chunks_->finish(pending, shape.n_layers);
  }
  forward_calls_ += 1;
  return Status::ok();
}

// The chunk's ops between begin_chunk and end_chunk; a chunk whose recording fails is discarded.
Status ForwardPass::run_chunk(const Chunk& chunk, std::span<const int32_t> tokens) {
  INFERSCOPE_RETURN_IF_ERROR(ops_->begin_chunk(chunk));
  const Status recorded = graph_->run(chunk, tokens);
  if (!recorded) {
    INFERSCOPE_RETURN_IF_ERROR(ops_->discard_chunk());
    return recorded;
  }
  return ops_->end_chunk(chunk);
}

void ForwardPass::clear() {
  std::fill(mtp_draft_from_.begin(), mtp_draft_from_.end(), -1);
  for (int s = 0; s < n_slots(); ++s) slots_->truncate(s, 0);
  for (int s = 0; states_ && s < n_slots(); ++s) states_->replay(s).clear();
}

void ForwardPass::clear_with_prefixes() {
  std::fill(mtp_draft_from_.begin(), mtp_draft_from_.end(), -1);
  slots_->clear_with_prefixes();
  if (states_) states_->clear();
}

int64_t ForwardPass::kv_length(int slot) const {
  return slots_->length(slot) + (states_ ? static_cast<int64_t>(states_->replay(slot).size()) : 0);
}

Status ForwardPass::shift_context(int slot) {
  INFERSCOPE_RETURN_IF_ERROR(catch_up(slot));
  return slots_->shift_context(slot);
}

Status ForwardPass::reorder(std::span<const int32_t> parents) {
  INFERSCOPE_RETURN_IF_ERROR(slots_->reorder(parents));
  return states_ ? states_->reorder(parents) : Status::ok();
}

// Back to the newest checkpoint at or before `length` (a zero state without one), the tokens
// from there to `length` replayed at the slot's next call.
void ForwardPass::truncate(int slot, int64_t length) {
  int64_t& draft_from = mtp_draft_from_[static_cast<size_t>(slot)];
  if (draft_from >= 0 && length >= draft_from) {  // an MTP draft's rows only: no state moved
    slots_->truncate(slot, length);
    if (length == draft_from) draft_from = -1;
    return;
  }
  draft_from = -1;
  if (!states_) return slots_->truncate(slot, length);
  if (restore_row_state(slot, length)) return;
  std::vector<int32_t>& replay = states_->replay(slot);
  std::vector<int32_t> all(slots_->tokens(slot).begin(), slots_->tokens(slot).end());
  all.insert(all.end(), replay.begin(), replay.end());
  const int64_t held = slots_->length(slot);
  if (length >= held) {
    replay.resize(static_cast<size_t>(std::min<int64_t>(length, static_cast<int64_t>(all.size())) - held));
    return;
  }
  RecurrentStates::Match back = length > 0 ? states_->find(all, length) : RecurrentStates::Match{};
  if (!states_->restore(back, slot)) back = {};
  slots_->truncate(slot, back.length);
  replay.assign(all.begin() + back.length, all.begin() + length);
}

// Back to a position within the last verification of `slot` that has a row state: that state,
// the KV rows after the position dropped, nothing replayed.
bool ForwardPass::restore_row_state(int slot, int64_t length) {
  const RowStates held = row_states_;
  row_states_ = {};
  const int64_t row = length - held.pos0 - 1;
  if (held.slot != slot || row < 0 || row >= held.rows || length >= slots_->length(slot)) return false;
  const StateCopy copy{plan_.recurrent.row_state(row), slot};
  if (!ops_->recurrent_copy(std::span(&copy, 1))) return false;
  slots_->truncate(slot, length);
  states_->replay(slot).clear();
  return true;
}

int64_t ForwardPass::reuse_prefix(int slot, std::span<const int32_t> tokens) {
  if (mtp_draft_from_[static_cast<size_t>(slot)] >= 0) truncate(slot, mtp_draft_from_[static_cast<size_t>(slot)]);
  return states_ ? reuse_hybrid_prefix(slot, tokens) : slots_->reuse_prefix(slot, tokens);
}

// What the slot holds when the tokens go on from it; else the longest checkpoint within what the
// slot holds of them; else the prefix cache's blocks as far as a checkpoint ends within them. The
// slot's own state is kept as a checkpoint first, for whoever asks for its tokens next.
int64_t ForwardPass::reuse_hybrid_prefix(int slot, std::span<const int32_t> tokens) {
  std::vector<int32_t> all(slots_->tokens(slot).begin(), slots_->tokens(slot).end());
  const std::vector<int32_t>& replay = states_->replay(slot);
  all.insert(all.end(), replay.begin(), replay.end());
  const int64_t limit = static_cast<int64_t>(tokens.size()) - 1;
  int64_t common = 0;
  while (common < limit && common < static_cast<int64_t>(all.size()) && all[common] == tokens[common]) ++common;
  if (!all.empty() && common == static_cast<int64_t>(all.size()) && !slots_->shifted(slot)) return common;
  const int64_t held = slots_->length(slot);
  const bool kept = held == 0 || slots_->shifted(slot) || static_cast<bool>(states_->save(slot, slots_->tokens(slot)));
  RecurrentStates::Match back = kept ? states_->find(tokens, std::min(common, held)) : RecurrentStates::Match{};
  if (back.length == 0) {
    const int64_t cached = slots_->reuse_prefix(slot, tokens);
    back = states_->find(tokens, cached);
  }
  if (!states_->restore(back, slot)) back = {};
  slots_->truncate(slot, back.length);
  states_->replay(slot).clear();
  return back.length;
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

ExecutorCounters ForwardPass::counters() const {
  ExecutorCounters c = ops_->counters();
  c.forward_calls = forward_calls_;
  return c;
}

}  // namespace inferscope
