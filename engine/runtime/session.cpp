#include "engine/runtime/session.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "engine/graph/forward_pass.h"
#include "engine/runtime/generation_support.h"
#include "engine/sampling/beam_search.h"

namespace inferscope {

namespace {

// Emits what the detokenizer still holds (an incomplete UTF-8 tail) as a last event.
std::string flush_detokenizer(StreamingDetokenizer& detok, const std::function<bool(const TokenEvent&)>& on_token) {
  TokenEvent event;
  event.id = -1;
  event.text = detok.flush();
  if (!event.text.empty() && on_token) on_token(event);
  return event.text;
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

Result<std::unique_ptr<Session>> Session::create(std::shared_ptr<const Model> model, const SessionOptions& options) {
  if (model->config().is_encoder()) {
    return Status::error(model->file().path() + " is an embedding model (" + model->config().arch_name +
                         "): it does not generate text; use it for embeddings (inferscope-cli embed, the semantic cache)");
  }
  auto s = std::unique_ptr<Session>(new Session());
  s->options_ = options;
  if (s->options_.n_ctx <= 0) s->options_.n_ctx = std::min<int64_t>(model->config().n_ctx_train, 4096);
  const bool automatic_threads = s->options_.n_threads <= 0;
  if (automatic_threads) s->options_.n_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  s->model_ = std::move(model);
  s->pool_ = std::make_unique<ThreadPool>(s->options_.n_threads);
  if (automatic_threads) s->pool_->adapt();
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

// A forward pass that runs the model's MTP block, made the first time a reply drafts with it
// (the KV cache starts empty); a model without the block, or a backend that cannot run it,
// keeps the pass it has, and the reply is refused with the reason.
Status Session::enable_mtp() {
  if (options_.mtp || !model_->config().has_mtp()) return Status::ok();
  SessionOptions with_mtp = options_;
  with_mtp.mtp = true;
  return recreate_executor(with_mtp);
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
  fo.mtp = options_.mtp;
  return ForwardPass::open(model_, options_.backend, fo);
}

GenerationContext Session::generation_context() const {
  return GenerationContext{model_.get(), forward_.get(), options_.cache, options_.kv_types, &cancelled_};
}

Result<std::unique_ptr<BatchGeneration>> Session::start_batch(int capacity) {
  if (capacity < 1) return Status::error("a batch needs at least one slot");
  INFERSCOPE_RETURN_IF_ERROR(ensure_slots(capacity));
  return BatchGeneration::create(generation_context(), capacity);
}

DraftTarget Session::draft_target() {
  return DraftTarget{model_.get(), options_.backend, pool_.get(), n_ctx(), options_.max_batch, options_.kv_types};
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
  if (request.draft.source == DraftSource::Mtp) INFERSCOPE_RETURN_IF_ERROR(enable_mtp());
  auto results = generate_batch(std::span(&request, 1), [&](size_t, const TokenEvent& event) {
    return !on_token || on_token(event);
  });
  if (!results) return results.status();
  return std::move(results->front());
}

Result<std::vector<GenerateResult>> Session::generate_batch(
    std::span<const GenerateRequest> requests, const std::function<bool(size_t, const TokenEvent&)>& on_token) {
  cancelled_.store(false);
  if (requests.empty()) return Status::error("no requests");
  std::vector<std::optional<Result<GenerateResult>>> outcomes(requests.size());  // outlives the batch
  auto batch = start_batch(static_cast<int>(requests.size()));
  if (!batch) return batch.status();
  for (size_t i = 0; i < requests.size(); ++i) {
    INFERSCOPE_RETURN_IF_ERROR((*batch)->add(
        requests[i], [&on_token, i](const TokenEvent& event) { return !on_token || on_token(i, event); },
        [&outcomes, i](Result<GenerateResult> outcome) { outcomes[i] = std::move(outcome); }));
  }
  while ((*batch)->active() > 0) INFERSCOPE_RETURN_IF_ERROR((*batch)->step());
  std::vector<GenerateResult> results;
  for (auto& outcome : outcomes) {
    if (!*outcome) return outcome->status();
    results.push_back(std::move(**outcome));
  }
  return results;
}

Result<GenerateResult> Session::generate_beam(const GenerateRequest& request,
                                              const std::function<bool(const TokenEvent&)>& on_token) {
  const auto start = GenerationClock::now();
  const Tokenizer& tok = model_->tokenizer();
  INFERSCOPE_RETURN_IF_ERROR(ensure_slots(request.beam_width));
  GenerateResult result;
  result.prompt_token_ids = tok.encode(request.prompt, request.add_special, request.parse_special);
  if (result.prompt_token_ids.empty()) return Status::error("the prompt is empty");
  if (options_.cache.kv_window == 0 &&
      static_cast<int64_t>(result.prompt_token_ids.size()) + request.max_tokens > forward_->n_ctx()) {
    return Status::error("prompt plus max tokens exceed the context length of " + std::to_string(forward_->n_ctx()));
  }
  const std::span<const int32_t> prompt(result.prompt_token_ids);
  result.reused_tokens = generation_context().start_slot(0, prompt);
  std::vector<float> logits(static_cast<size_t>(model_->config().n_vocab));
  INFERSCOPE_RETURN_IF_ERROR(forward_->forward(0, prompt.subspan(static_cast<size_t>(result.reused_tokens)), false,
                                               logits.data()));
  result.timings.prefill_ms = ms_since(start);
  result.timings.ttft_saved_ms = static_cast<double>(result.reused_tokens) * result.timings.prefill_ms /
                                 static_cast<double>(prompt.size() - static_cast<size_t>(result.reused_tokens));

  ForwardBeamModel beam_model(*forward_, *model_, request);
  BeamSearchParams params;
  params.beam_width = request.beam_width;
  params.max_tokens = request.max_tokens;
  StreamingDetokenizer detok(tok, StreamingDetokenizer::ControlTokens::Hidden);
  bool first = true;
  const auto decode_start = GenerationClock::now();
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
