#include "engine/runtime/batch_generation.h"

#include <algorithm>
#include <functional>
#include <string>

#include "engine/runtime/draft_model.h"
#include "engine/runtime/generation_support.h"
#include "engine/sampling/lookup_draft.h"
#include "engine/sampling/sampler.h"
#include "engine/sampling/top_k.h"
#include "engine/tokenizer/streaming_detokenizer.h"

namespace inferscope {

namespace {

std::vector<TokenLogprob> raw_top_logprobs(std::span<const float> logits, int32_t k) {
  std::vector<TokenLogprob> out;
  for (auto [id, lp] : top_logprobs(logits, k)) out.push_back({id, lp});
  return out;
}

Status validate(const GenerateRequest& request) {
  if (request.max_tokens < 0) return Status::error("max tokens must be >= 0");
  if (request.beam_width != 1) return Status::error("a batch of requests samples (beam width 1)");
  if (request.top_logprobs < 0) return Status::error("top logprobs must be >= 0");
  INFERSCOPE_RETURN_IF_ERROR(request.sampling.validate());
  const DraftOptions& draft = request.draft;
  if (draft.source == DraftSource::None) return Status::ok();
  if (draft.max_tokens < 1) return Status::error("the longest speculative draft must be >= 1 token");
  if (draft.source == DraftSource::Model && !draft.model) return Status::error("drafting from a model needs a draft model");
  return Status::ok();
}

// The draft source fits `model`: a draft model of its vocabulary, a layer count it has, an MTP
// block the executor runs.
Status check_draft_source(const DraftOptions& draft, const Model& model, const ForwardExecutor& executor) {
  if (draft.source == DraftSource::Mtp && !executor.drafts_mtp()) {
    return Status::error(model.config().has_mtp()
                             ? "drafting with the model's MTP layers needs the session made for it (--draft-mtp)"
                             : "this model has no multi-token-prediction layers to draft with");
  }
  if (draft.source == DraftSource::Model) return check_draft_vocabulary(draft.model->model(), model);
  if (draft.source == DraftSource::LayerSkip && (draft.layers < 1 || draft.layers > model.config().n_layer)) {
    return Status::error("layer-skip drafts run through 1 to " + std::to_string(model.config().n_layer) +
                         " layers of this model, not " + std::to_string(draft.layers));
  }
  if (draft.source == DraftSource::LayerSkip && model.config().is_hybrid()) {
    return Status::error("layer-skip drafts through the first layers of a hybrid model would move its recurrent "
                         "state past tokens the full model never saw; draft with a draft model or lookup instead");
  }
  return Status::ok();
}

}  // namespace

// One sequence: its request and callbacks, its slot, the result so far, its sampler and
// detokenizer, and the logits its next token is sampled from.
struct BatchGeneration::Sequence {
  GenerateRequest request;
  OnToken on_token;
  OnDone on_done;
  int slot = 0;
  GenerateResult result;
  Sampler sampler;
  StreamingDetokenizer detok;
  std::vector<float> logits;
  GenerationClock::time_point start = GenerationClock::now();
  bool prefilled = false;  // false until the step that prefills its prompt
  bool running = true;     // false once it has stopped (result.stop_reason says why)
  bool reported = false;   // on_done has been called
  int32_t step = 0;        // tokens sampled so far
  int32_t next = -1;       // the token to feed next
  double decode_ms = 0;    // of the decode steps it took part in
  size_t decode_steps = 0;
  int32_t draft_length = 0;  // the next draft's length at most (speculative decoding)
  int32_t draft_misses = 0;  // drafts rejected whole in a row
  int32_t draft_pause = 0;   // steps left to decode without drafting
};

Result<std::unique_ptr<BatchGeneration>> BatchGeneration::create(const GenerationContext& context, int capacity) {
  if (capacity < 1) return Status::error("a batch needs at least one slot");
  if (context.executor->n_slots() < capacity) return Status::error("internal: the executor has fewer slots than the batch");
  return std::unique_ptr<BatchGeneration>(new BatchGeneration(context, capacity));
}

BatchGeneration::BatchGeneration(const GenerationContext& context, int capacity) : context_(context), capacity_(capacity) {
  for (int slot = capacity - 1; slot >= 0; --slot) free_slots_.push_back(slot);
}

BatchGeneration::~BatchGeneration() { cancel_all(); }

Status BatchGeneration::add(const GenerateRequest& request, OnToken on_token, OnDone on_done) {
  INFERSCOPE_RETURN_IF_ERROR(validate(request));
  if (free_slots_.empty()) return Status::error("every slot of the batch is taken");
  const Model& model = *context_.model;
  INFERSCOPE_RETURN_IF_ERROR(check_draft_source(request.draft, model, *context_.executor));
  const Tokenizer& tok = model.tokenizer();
  auto sampler = Sampler::create(request.sampling, static_cast<int32_t>(model.config().n_vocab));
  if (!sampler) return sampler.status();
  auto seq = std::unique_ptr<Sequence>(new Sequence{
      request, std::move(on_token), std::move(on_done), 0, {}, std::move(*sampler),
      StreamingDetokenizer(tok, StreamingDetokenizer::ControlTokens::Hidden),
      std::vector<float>(static_cast<size_t>(model.config().n_vocab))});
  std::vector<int32_t>& prompt = seq->result.prompt_token_ids;
  prompt = tok.encode(request.prompt, request.add_special, request.parse_special);
  if (prompt.empty()) return Status::error("the prompt is empty");
  const int64_t n_ctx = context_.executor->n_ctx();
  if (context_.cache.kv_window == 0 && static_cast<int64_t>(prompt.size()) > n_ctx) {
    return Status::error("context is full: the prompt's " + std::to_string(prompt.size()) +
                         " tokens exceed the context length of " + std::to_string(n_ctx) +
                         " (use a larger --context or --kv-window)");
  }
  for (int32_t id : prompt) seq->sampler.accept(id);
  seq->draft_length = request.draft.source == DraftSource::None ? 0 : request.draft.max_tokens;
  seq->slot = free_slots_.back();
  free_slots_.pop_back();
  sequences_.push_back(std::move(seq));
  return Status::ok();
}

Status BatchGeneration::step() {
  if (sequences_.empty()) return Status::ok();
  if (sequences_.size() == 1 && sequences_.front()->prefilled) {
    Sequence& alone = *sequences_.front();
    const auto started = GenerationClock::now();
    Result<std::vector<int32_t>> draft = propose_draft(alone);
    if (!draft) {
      fail_all(draft.status());
      return draft.status();
    }
    if (!draft->empty()) return speculative_step(alone, *draft, started);
  }
  std::vector<SequenceTokens> batch;
  size_t prefill_tokens = 0;
  for (const auto& seq : sequences_) {
    if (seq->prefilled) {
      batch.push_back({seq->slot, std::span(&seq->next, 1), seq->logits.data()});
      continue;
    }
    const std::span<const int32_t> prompt(seq->result.prompt_token_ids);
    seq->result.reused_tokens = context_.start_slot(seq->slot, prompt);
    batch.push_back({seq->slot, prompt.subspan(static_cast<size_t>(seq->result.reused_tokens)), seq->logits.data()});
    prefill_tokens += batch.back().tokens.size();
  }
  const auto t0 = GenerationClock::now();
  const Status forwarded = context_.executor->forward_batch(batch);
  if (!forwarded.is_ok()) {
    fail_all(forwarded);
    return forwarded;
  }
  const auto t1 = GenerationClock::now();
  const double step_ms = ms_since(t0, t1);
  for (const auto& seq : sequences_) {
    if (seq->prefilled) {
      seq->decode_ms += step_ms;
      seq->decode_steps += 1;
    } else {
      GenerateTimings& t = seq->result.timings;
      t.prefill_ms = ms_since(seq->start, t1);
      t.ttft_saved_ms = static_cast<double>(seq->result.reused_tokens) * step_ms / static_cast<double>(prefill_tokens);
      seq->prefilled = true;
    }
    const Status sampled = sample(*seq);
    if (!sampled.is_ok()) report(*seq, sampled);
  }
  end_finished();
  return Status::ok();
}

// A draft of `seq`'s next tokens from its request's source: none without one, with a KV window,
// while drafting pauses, or without room. At most draft_length tokens, one fewer than the tokens `seq` may still emit,
// and few enough that the context stays short of full while they are verified.
Result<std::vector<int32_t>> BatchGeneration::propose_draft(Sequence& seq) {
  constexpr int kMaxNgram = 3;
  const DraftOptions& options = seq.request.draft;
  if (options.source == DraftSource::None || seq.draft_length <= 0 || context_.cache.kv_window != 0) {
    return std::vector<int32_t>{};
  }
  if (seq.draft_pause > 0) {
    seq.draft_pause -= 1;
    return std::vector<int32_t>{};
  }
  const ForwardExecutor& executor = *context_.executor;
  const int64_t room = executor.n_ctx() - executor.kv_length(seq.slot) - 2;
  const int64_t left = static_cast<int64_t>(seq.request.max_tokens) - seq.step - 1;
  const int64_t length = std::min<int64_t>({seq.draft_length, room, left});
  if (length <= 0) return std::vector<int32_t>{};
  if (options.source == DraftSource::LayerSkip) return self_draft(seq, length);
  if (options.source == DraftSource::Mtp) return mtp_draft(seq, length);
  std::vector<int32_t> context = seq.result.prompt_token_ids;
  context.insert(context.end(), seq.result.token_ids.begin(), seq.result.token_ids.end());
  if (options.source == DraftSource::Lookup) return lookup_draft(context, kMaxNgram, static_cast<int>(length));
  return options.model->draft(context, static_cast<int64_t>(seq.result.prompt_token_ids.size()), length);
}

// Greedy tokens from the target model's first draft.layers layers, fed one at a time into
// `seq`'s slot after its last token. Those positions hold the early layers' KV only, so they
// leave the slot again: the verification writes every layer of the ones it keeps.
Result<std::vector<int32_t>> BatchGeneration::self_draft(const Sequence& seq, int64_t length) {
  ForwardExecutor& executor = *context_.executor;
  return draft_in_slot(seq, length, [&](int32_t token, bool) {
    return executor.forward_layers(seq.slot, std::span(&token, 1), seq.request.draft.layers, draft_logits_.data());
  });
}

// Greedy tokens from the model's MTP block, the first predicted after `seq`'s last token. Their
// positions hold the block's KV only (the recurrent state never saw them).
Result<std::vector<int32_t>> BatchGeneration::mtp_draft(const Sequence& seq, int64_t length) {
  ForwardExecutor& executor = *context_.executor;
  return draft_in_slot(seq, length, [&](int32_t token, bool first) {
    return executor.draft_mtp(seq.slot, token, first, draft_logits_.data());
  });
}

// Up to `length` greedy tokens that `step` (one token through the drafting part of the pass,
// its logits into draft_logits_; first: the token is `seq`'s last) drafts in `seq`'s slot, each
// fed back for the next; the positions they took leave the slot again.
Result<std::vector<int32_t>> BatchGeneration::draft_in_slot(const Sequence& seq, int64_t length, const DraftStep& step) {
  ForwardExecutor& executor = *context_.executor;
  const Tokenizer& tok = context_.model->tokenizer();
  const int64_t kv_before = executor.kv_length(seq.slot);
  draft_logits_.resize(seq.logits.size());
  std::vector<int32_t> draft;
  for (int32_t token = seq.next; static_cast<int64_t>(draft.size()) < length;) {
    const Status drafted = step(token, draft.empty());
    if (!drafted) {
      executor.truncate(seq.slot, kv_before);
      return drafted;
    }
    token = argmax_logit(draft_logits_);
    draft.push_back(token);
    if (is_stop_token(tok, seq.request, token)) break;
  }
  executor.truncate(seq.slot, kv_before);
  return draft;
}

// Feeds `seq`'s last token and `draft` in one verification call (each row's logits bit for bit
// plain decoding's), then samples position after position while the sampled token is the
// drafted one; the KV cache keeps the positions of the tokens kept. The step's decode time counts from `started` (drafting included).
Status BatchGeneration::speculative_step(Sequence& seq, std::span<const int32_t> draft,
                                         GenerationClock::time_point started) {
  ForwardExecutor& executor = *context_.executor;
  const size_t n_vocab = seq.logits.size();
  const int64_t kv_before = executor.kv_length(seq.slot);
  std::vector<int32_t> tokens{seq.next};
  tokens.insert(tokens.end(), draft.begin(), draft.end());
  verify_logits_.resize(tokens.size() * n_vocab);
  const Status forwarded = executor.verify(seq.slot, tokens, verify_logits_.data());
  if (!forwarded.is_ok()) {
    fail_all(forwarded);
    return forwarded;
  }
  seq.decode_ms += ms_since(started);
  size_t accepted = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::copy_n(verify_logits_.begin() + static_cast<std::ptrdiff_t>(i * n_vocab), n_vocab, seq.logits.begin());
    const int32_t sampled_before = seq.step;
    const Status sampled = sample(seq);
    seq.decode_steps += static_cast<size_t>(seq.step - sampled_before);
    if (!sampled.is_ok()) report(seq, sampled);
    if (!seq.running || i + 1 == tokens.size() || seq.next != tokens[i + 1]) break;
    accepted += 1;
  }
  executor.truncate(seq.slot, kv_before + 1 + static_cast<int64_t>(accepted));
  seq.result.draft_tokens += static_cast<int64_t>(draft.size());
  seq.result.accepted_tokens += static_cast<int64_t>(accepted);
  seq.draft_length = accepted == draft.size() ? std::min(seq.request.draft.max_tokens, seq.draft_length * 2)
                                              : static_cast<int32_t>(accepted) + 1;
  pause_failing_drafts(seq, accepted);
  end_finished();
  return Status::ok();
}

// A draft rejected whole still cost its drafting and a verification wider than a decode step:
// from the second such draft in a row, drafting pauses for 1, 2, 4 ... up to 32 steps, and
// resumes at full speed after the first draft that is partly right.
void BatchGeneration::pause_failing_drafts(Sequence& seq, size_t accepted) {
  constexpr int32_t kMaxPauseShift = 5;
  seq.draft_misses = accepted == 0 ? seq.draft_misses + 1 : 0;
  if (seq.draft_misses >= 2) seq.draft_pause = int32_t{1} << std::min(seq.draft_misses - 2, kMaxPauseShift);
}

// Samples `seq`'s next token from its logits and reports it; leaves it running with the token
// to feed next, or stopped with its reason. A full context is shifted when the session allows
// it; the KV window never fills it.
Status BatchGeneration::sample(Sequence& seq) {
  const GenerateRequest& request = seq.request;
  GenerateResult& result = seq.result;
  const Tokenizer& tok = context_.model->tokenizer();
  ForwardExecutor& executor = *context_.executor;
  const CachePolicy& cache = context_.cache;
  seq.running = false;
  result.stop_reason = "max_tokens";
  if (seq.step >= request.max_tokens) return Status::ok();
  TokenEvent event;
  if (request.top_logprobs > 0) event.top_logprobs = raw_top_logprobs(seq.logits, request.top_logprobs);
  event.id = seq.sampler.sample(seq.logits);
  if (seq.step++ == 0) result.timings.ttft_ms = ms_since(seq.start);
  if (is_stop_token(tok, request, event.id)) {
    result.stop_reason = stop_reason_for(tok, event.id);
    return Status::ok();
  }
  seq.sampler.accept(event.id);
  result.token_ids.push_back(event.id);
  event.text = seq.detok.push(event.id);
  result.text += event.text;
  if (request.top_logprobs > 0) result.steps.push_back(event.top_logprobs);
  const bool wanted = !seq.on_token || seq.on_token(event);
  if (!wanted || context_.cancel_requested()) {
    result.stop_reason = "cancelled";
    return Status::ok();
  }
  if (seq.step == request.max_tokens) return Status::ok();
  if (cache.kv_window == 0 && executor.kv_length(seq.slot) >= executor.n_ctx()) {
    if (!cache.context_shift) {
      result.stop_reason = "context_full";
      return Status::ok();
    }
    INFERSCOPE_RETURN_IF_ERROR(executor.shift_context(seq.slot));
    result.context_shifts += 1;
  }
  seq.next = event.id;
  seq.running = true;
  return Status::ok();
}

// Reports `seq`'s result: the detokenizer's last text, the rates and the memory in use.
void BatchGeneration::finish(Sequence& seq) {
  if (seq.reported) return;
  const std::string tail = seq.detok.flush();
  if (!tail.empty()) {
    TokenEvent event;
    event.id = -1;
    event.text = tail;
    if (seq.on_token) seq.on_token(event);
    seq.result.text += tail;
  }
  GenerateTimings& t = seq.result.timings;
  t.decode_ms = seq.decode_ms;
  finish_timings(t, seq.result.prompt_token_ids.size() - static_cast<size_t>(seq.result.reused_tokens),
                 seq.decode_steps);
  seq.result.memory = context_.memory();
  if (seq.request.draft.model) seq.result.memory.draft_model_bytes = seq.request.draft.model->memory_bytes();
  report(seq, std::move(seq.result));
}

// Ends `seq` with `outcome` (its result or an error): on_done's one call.
void BatchGeneration::report(Sequence& seq, Result<GenerateResult> outcome) {
  seq.running = false;
  seq.reported = true;
  if (seq.on_done) seq.on_done(std::move(outcome));
}

// Reports the sequences that stopped this step and frees their slots.
void BatchGeneration::end_finished() {
  std::vector<std::unique_ptr<Sequence>> still_running;
  for (auto& seq : sequences_) {
    if (seq->running) {
      still_running.push_back(std::move(seq));
      continue;
    }
    finish(*seq);
    free_slots_.push_back(seq->slot);
  }
  sequences_ = std::move(still_running);
  std::sort(free_slots_.begin(), free_slots_.end(), std::greater<>());
}

void BatchGeneration::cancel_all() {
  for (auto& seq : sequences_) {
    seq->result.stop_reason = "cancelled";
    seq->running = false;
  }
  end_finished();
}

void BatchGeneration::fail_all(const Status& error) {
  for (auto& seq : sequences_) {
    if (!seq->reported) report(*seq, error);
  }
  end_finished();
}

}  // namespace inferscope
