#include "engine/runtime/session.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "engine/sampling/beam_search.h"
#include "engine/sampling/sampler.h"

namespace inferscope {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0, Clock::time_point t1 = Clock::now()) {
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

std::vector<TokenLogprob> raw_top_logprobs(std::span<const float> logits, int32_t k) {
  std::vector<TokenLogprob> out;
  for (auto [id, lp] : top_logprobs(logits, k)) out.push_back({id, lp});
  return out;
}

// Emits what the detokenizer still holds (an incomplete UTF-8 tail) as a last event.
std::string flush_detokenizer(StreamingDetokenizer& detok, const std::function<bool(const TokenEvent&)>& on_token) {
  TokenEvent event;
  event.id = -1;
  event.text = detok.flush();
  if (!event.text.empty() && on_token) on_token(event);
  return event.text;
}

bool is_stop_token(const Tokenizer& tok, const GenerateRequest& request, int32_t id) {
  return tok.is_end_of_generation(id) ||
         std::find(request.stop_token_ids.begin(), request.stop_token_ids.end(), id) != request.stop_token_ids.end();
}

const char* stop_reason_for(const Tokenizer& tok, int32_t id) { return id == tok.eos_id() ? "eos" : "end_of_turn"; }

void finish_timings(GenerateTimings& t, size_t prefilled_tokens, size_t decoded_tokens) {
  t.prefill_tokens_per_s = t.prefill_ms > 0 ? 1000.0 * static_cast<double>(prefilled_tokens) / t.prefill_ms : 0;
  t.decode_tokens_per_s = t.decode_ms > 0 ? 1000.0 * static_cast<double>(decoded_tokens) / t.decode_ms : 0;
}

// Beam search drives the forward pass through this adapter: one KV slot per beam.
class ForwardBeamModel : public BeamSearchModel {
 public:
  ForwardBeamModel(ForwardExecutor& fp, const Model& model, const GenerateRequest& request)
      : fp_(fp), model_(model), request_(request) {}
  int32_t n_vocab() const override { return static_cast<int32_t>(model_.config().n_vocab); }
  Status reorder_slots(std::span<const int32_t> parents) override {
    std::vector<int32_t> all(static_cast<size_t>(fp_.n_slots()));
    for (size_t i = 0; i < all.size(); ++i) all[i] = i < parents.size() ? parents[i] : static_cast<int32_t>(i);
    return fp_.reorder(all);
  }
  Status decode(std::span<const int32_t> slots, std::span<const int32_t> tokens,
                std::vector<std::vector<float>>& logits) override {
    logits.resize(slots.size());
    std::vector<SequenceTokens> batch;
    for (size_t i = 0; i < slots.size(); ++i) {
      logits[i].resize(static_cast<size_t>(n_vocab()));
      batch.push_back({slots[i], tokens.subspan(i, 1), logits[i].data()});
    }
    return fp_.forward_batch(batch);
  }
  bool is_end_of_generation(int32_t token) const override {
    return is_stop_token(model_.tokenizer(), request_, token);
  }

 private:
  ForwardExecutor& fp_;
  const Model& model_;
  const GenerateRequest& request_;
};

}  // namespace

uint64_t peak_rss_bytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;
}

Result<std::unique_ptr<Session>> Session::create(std::shared_ptr<const Model> model, const SessionOptions& options) {
  if (model->config().is_encoder()) {
    return Status::error(model->file().path() + " is an embedding model (" + model->config().arch_name +
                         "): it does not generate text; use it for embeddings (inferscope-cli embed, the semantic cache)");
  }
  auto s = std::unique_ptr<Session>(new Session());
  s->options_ = options;
  if (s->options_.n_ctx <= 0) s->options_.n_ctx = std::min<int64_t>(model->config().n_ctx_train, 4096);
  if (s->options_.n_threads <= 0) s->options_.n_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  s->model_ = std::move(model);
  s->pool_ = std::make_unique<ThreadPool>(s->options_.n_threads);
  INFERSCOPE_RETURN_IF_ERROR(s->ensure_slots(1));
  return s;
}

Status Session::ensure_slots(int n_slots) {
  // Slots only grow: after a beam search the next sampled reply reuses the executor (on a GPU
  // backend a new one would upload the weights again), at the cost of keeping the beams' KV.
  if (forward_ && forward_->n_slots() >= n_slots) return Status::ok();
  forward_.reset();
  auto executor = create_executor(n_slots);
  if (!executor) return executor.status();
  forward_ = std::move(*executor);
  return Status::ok();
}

Result<std::unique_ptr<ForwardExecutor>> Session::create_executor(int n_slots) {
  ForwardOptions fo;
  fo.n_ctx = options_.n_ctx;
  fo.n_slots = n_slots;
  fo.max_batch = options_.max_batch;
  fo.kv_types = options_.kv_types;
  fo.kv_block_size = options_.cache.kv_block_size;
  fo.kv_cache_budget_bytes = options_.cache.kv_cache_budget_bytes;
  fo.kv_window = options_.cache.kv_window;
  fo.kv_sinks = options_.cache.kv_sinks;
  fo.on_upload_progress = options_.on_upload_progress;
  fo.host_threads = pool_.get();
  auto plugin = load_backend(options_.backend.backend);
  if (!plugin) return plugin.status();
  return (*plugin)->create_executor(model_, options_.backend.device, fo);
}

Status Session::set_kv_types(KvTypes types) {
  if (types == options_.kv_types) return Status::ok();
  SessionOptions changed = options_;
  changed.kv_types = types;
  return recreate_executor(changed);
}

Status Session::set_cache_policy(const CachePolicy& policy) {
  if (policy == options_.cache) return Status::ok();
  SessionOptions changed = options_;
  changed.cache = policy;
  return recreate_executor(changed);
}

// A new executor for `changed` options (the KV cache's): on failure (a type the backend cannot
// run, no memory, a window that does not fit) the previous one is made again and the error says
// why the change was refused.
Status Session::recreate_executor(const SessionOptions& changed) {
  const SessionOptions previous = options_;
  const int n_slots = forward_ ? forward_->n_slots() : 1;
  forward_.reset();  // its memory is needed for the new cache
  options_ = changed;
  auto executor = create_executor(n_slots);
  if (executor) {
    forward_ = std::move(*executor);
    return Status::ok();
  }
  options_ = previous;
  auto restored = create_executor(n_slots);
  if (!restored) return Status::error(executor.status().message() + "; restoring the previous KV cache failed too: " +
                                      restored.status().message());
  forward_ = std::move(*restored);
  return executor.status();
}

MemoryUsage Session::memory() const {
  MemoryUsage m;
  m.kv_types = options_.kv_types;
  m.weights_bytes = model_->weights().total_bytes;
  const ExecutorMemory em = forward_->memory();
  m.device_weights_bytes = em.device_weight_bytes;
  m.kv_cache_bytes = em.kv_cache_bytes;
  m.scratch_bytes = em.scratch_bytes;
  m.peak_rss_bytes = peak_rss_bytes();
  m.kv_blocks = forward_->kv_blocks();
  return m;
}

Status Session::evaluate(std::span<const int32_t> tokens, std::vector<float>& logits) {
  INFERSCOPE_RETURN_IF_ERROR(ensure_slots(1));
  forward_->clear();
  logits.resize(tokens.size() * static_cast<size_t>(model_->config().n_vocab));
  return forward_->forward(0, tokens, true, logits.data());
}

Result<GenerateResult> Session::generate(const GenerateRequest& request,
                                         const std::function<bool(const TokenEvent&)>& on_token) {
  cancelled_.store(false);
  if (request.max_tokens < 0) return Status::error("max tokens must be >= 0");
  if (request.beam_width < 1) return Status::error("beam width must be >= 1");
  if (request.top_logprobs < 0) return Status::error("top logprobs must be >= 0");
  INFERSCOPE_RETURN_IF_ERROR(request.sampling.validate());
  if (request.beam_width > 1) return generate_beam(request, on_token);
  return generate_sampled(request, on_token);
}

// One sequence of a sampled generation: its request, result, sampler, detokenizer and the
// logits of its next step.
struct Session::Sampled {
  const GenerateRequest* request = nullptr;
  GenerateResult result;
  Sampler sampler;
  StreamingDetokenizer detok;
  std::vector<float> logits;
  int32_t step = 0;      // tokens sampled so far
  int32_t next = -1;     // the token to feed next
  bool running = true;
  double decode_ms = 0;  // of the decode steps it took part in
  size_t decode_steps = 0;
};

Result<GenerateResult> Session::generate_sampled(const GenerateRequest& request,
                                                 const std::function<bool(const TokenEvent&)>& on_token) {
  auto results = generate_batch(std::span(&request, 1), [&](size_t, const TokenEvent& event) {
    return !on_token || on_token(event);
  });
  if (!results) return results.status();
  return std::move(results->front());
}

Result<std::vector<GenerateResult>> Session::generate_batch(
    std::span<const GenerateRequest> requests, const std::function<bool(size_t, const TokenEvent&)>& on_token) {
  const auto start = Clock::now();
  cancelled_.store(false);
  if (requests.empty()) return Status::error("no requests");
  const Tokenizer& tok = model_->tokenizer();
  const int32_t n_vocab = static_cast<int32_t>(model_->config().n_vocab);
  std::vector<Sampled> seqs;
  seqs.reserve(requests.size());
  for (const GenerateRequest& request : requests) {
    if (request.max_tokens < 0) return Status::error("max tokens must be >= 0");
    if (request.beam_width != 1) return Status::error("a batch of requests samples (beam width 1)");
    if (request.top_logprobs < 0) return Status::error("top logprobs must be >= 0");
    INFERSCOPE_RETURN_IF_ERROR(request.sampling.validate());
    auto sampler = Sampler::create(request.sampling, n_vocab);
    if (!sampler) return sampler.status();
    seqs.push_back({&request, {}, std::move(*sampler), StreamingDetokenizer(tok, StreamingDetokenizer::ControlTokens::Hidden),
                    std::vector<float>(static_cast<size_t>(n_vocab))});
    Sampled& seq = seqs.back();
    seq.result.prompt_token_ids = tok.encode(request.prompt, request.add_special, request.parse_special);
    if (seq.result.prompt_token_ids.empty()) return Status::error("the prompt is empty");
    for (int32_t id : seq.result.prompt_token_ids) seq.sampler.accept(id);
  }
  INFERSCOPE_RETURN_IF_ERROR(ensure_slots(static_cast<int>(seqs.size())));
  INFERSCOPE_RETURN_IF_ERROR(prefill(seqs, start));

  std::vector<SequenceTokens> batch;
  for (;;) {
    batch.clear();
    for (size_t i = 0; i < seqs.size(); ++i) {
      if (!seqs[i].running) continue;
      INFERSCOPE_RETURN_IF_ERROR(sample_step(seqs[i], static_cast<int>(i), start, on_token));
      if (seqs[i].running) batch.push_back({static_cast<int>(i), std::span(&seqs[i].next, 1), seqs[i].logits.data()});
    }
    if (batch.empty()) break;
    const auto t0 = Clock::now();
    INFERSCOPE_RETURN_IF_ERROR(forward_->forward_batch(batch));
    const double ms = ms_since(t0);
    for (const SequenceTokens& b : batch) {
      seqs[static_cast<size_t>(b.slot)].decode_ms += ms;
      seqs[static_cast<size_t>(b.slot)].decode_steps += 1;
    }
  }
  std::vector<GenerateResult> results;
  for (size_t i = 0; i < seqs.size(); ++i) {
    Sampled& seq = seqs[i];
    const std::string tail = seq.detok.flush();
    if (!tail.empty()) {
      TokenEvent event;
      event.id = -1;
      event.text = tail;
      if (on_token) on_token(i, event);
      seq.result.text += tail;
    }
    seq.result.timings.decode_ms = seq.decode_ms;
    finish_timings(seq.result.timings,
                   seq.result.prompt_token_ids.size() - static_cast<size_t>(seq.result.reused_tokens),
                   seq.decode_steps);
    seq.result.memory = memory();
    results.push_back(std::move(seq.result));
  }
  return results;
}

// Samples sequence `slot`'s next token from its logits and reports it; leaves it running with
// the token to feed next, or stopped with its reason. A full context is shifted when the
// session allows it; the KV window never fills it.
Status Session::sample_step(Sampled& seq, int slot, Clock::time_point start,
                            const std::function<bool(size_t, const TokenEvent&)>& on_token) {
  const GenerateRequest& request = *seq.request;
  GenerateResult& result = seq.result;
  const Tokenizer& tok = model_->tokenizer();
  seq.running = false;
  result.stop_reason = "max_tokens";
  if (seq.step >= request.max_tokens) return Status::ok();
  TokenEvent event;
  if (request.top_logprobs > 0) event.top_logprobs = raw_top_logprobs(seq.logits, request.top_logprobs);
  event.id = seq.sampler.sample(seq.logits);
  if (seq.step++ == 0) result.timings.ttft_ms = ms_since(start);
  if (is_stop_token(tok, request, event.id)) {
    result.stop_reason = stop_reason_for(tok, event.id);
    return Status::ok();
  }
  seq.sampler.accept(event.id);
  result.token_ids.push_back(event.id);
  event.text = seq.detok.push(event.id);
  result.text += event.text;
  if (request.top_logprobs > 0) result.steps.push_back(event.top_logprobs);
  const bool wanted = !on_token || on_token(static_cast<size_t>(slot), event);
  if (!wanted || cancelled_.load()) {
    result.stop_reason = "cancelled";
    return Status::ok();
  }
  if (seq.step == request.max_tokens) return Status::ok();
  if (options_.cache.kv_window == 0 && forward_->kv_length(slot) >= forward_->n_ctx()) {
    if (!options_.cache.context_shift) {
      result.stop_reason = "context_full";
      return Status::ok();
    }
    INFERSCOPE_RETURN_IF_ERROR(forward_->shift_context(slot));
    result.context_shifts += 1;
  }
  seq.next = event.id;
  seq.running = true;
  return Status::ok();
}

// Each sequence's slot takes the cached KV of its prompt's longest cached prefix (when the
// prefix cache is on), then the rest of every prompt is prefilled in one forward call; each
// sequence's logits: its last prompt token's.
Status Session::prefill(std::span<Sampled> seqs, Clock::time_point start) {
  std::vector<SequenceTokens> batch;
  size_t prefilled = 0;
  for (size_t i = 0; i < seqs.size(); ++i) {
    GenerateResult& r = seqs[i].result;
    const int slot = static_cast<int>(i);
    const std::span<const int32_t> prompt(r.prompt_token_ids);
    if (options_.cache.prefix_cache) {
      r.reused_tokens = forward_->reuse_prefix(slot, prompt);
    } else {
      forward_->truncate(slot, 0);
    }
    batch.push_back({slot, prompt.subspan(static_cast<size_t>(r.reused_tokens)), seqs[i].logits.data()});
    prefilled += batch.back().tokens.size();
  }
  INFERSCOPE_RETURN_IF_ERROR(forward_->forward_batch(batch));
  const double prefill_ms = ms_since(start);
  for (Sampled& seq : seqs) {
    GenerateTimings& t = seq.result.timings;
    t.prefill_ms = prefill_ms;
    t.ttft_saved_ms = static_cast<double>(seq.result.reused_tokens) * prefill_ms / static_cast<double>(prefilled);
  }
  return Status::ok();
}

Result<GenerateResult> Session::generate_beam(const GenerateRequest& request,
                                              const std::function<bool(const TokenEvent&)>& on_token) {
  const auto start = Clock::now();
  const Tokenizer& tok = model_->tokenizer();
  INFERSCOPE_RETURN_IF_ERROR(ensure_slots(request.beam_width));
  GenerateResult result;
  result.prompt_token_ids = tok.encode(request.prompt, request.add_special, request.parse_special);
  if (result.prompt_token_ids.empty()) return Status::error("the prompt is empty");
  if (options_.cache.kv_window == 0 &&
      static_cast<int64_t>(result.prompt_token_ids.size()) + request.max_tokens > forward_->n_ctx()) {
    return Status::error("prompt plus max tokens exceed the context length of " + std::to_string(forward_->n_ctx()));
  }
  Sampled prompt{&request, std::move(result), Sampler(request.sampling, static_cast<int32_t>(model_->config().n_vocab)),
                 StreamingDetokenizer(tok, StreamingDetokenizer::ControlTokens::Hidden),
                 std::vector<float>(static_cast<size_t>(model_->config().n_vocab))};
  INFERSCOPE_RETURN_IF_ERROR(prefill(std::span(&prompt, 1), start));
  result = std::move(prompt.result);
  const std::vector<float>& logits = prompt.logits;

  ForwardBeamModel beam_model(*forward_, *model_, request);
  BeamSearchParams params;
  params.beam_width = request.beam_width;
  params.max_tokens = request.max_tokens;
  StreamingDetokenizer detok(tok, StreamingDetokenizer::ControlTokens::Hidden);
  bool first = true;
  const auto decode_start = Clock::now();
  auto ids = beam_search(beam_model, logits, params, [&](int32_t id) {
    if (is_stop_token(tok, request, id)) return;
    if (first) result.timings.ttft_ms = ms_since(start);
    first = false;
    TokenEvent event;
    event.id = id;
    event.text = detok.push(id);
    if (on_token) on_token(event);
  });
  if (!ids) return ids.status();
  result.timings.decode_ms = ms_since(decode_start);
  result.token_ids = *ids;
  result.stop_reason = "max_tokens";
  if (!result.token_ids.empty() && is_stop_token(tok, request, result.token_ids.back())) {
    result.stop_reason = stop_reason_for(tok, result.token_ids.back());
    result.token_ids.pop_back();  // the end-of-generation token ends the text, it is not part of it
  }
  result.text = tok.decode(result.token_ids);
  flush_detokenizer(detok, on_token);
  finish_timings(result.timings, result.prompt_token_ids.size() - static_cast<size_t>(result.reused_tokens),
                 result.token_ids.size());
  result.memory = memory();
  return result;
}

}  // namespace inferscope
