#include "engine/compare/comparison.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <thread>
#include <utility>

#include "engine/chat/chat_prompt.h"
#include "engine/chat/chat_template.h"
#include "engine/weightlab/weight_recipe.h"
#include "engine/runtime/session.h"

namespace inferscope {
namespace {

using Clock = std::chrono::steady_clock;

// One sequence the quality pass evaluates. Every position's next-token distribution is compared
// (position j predicts tokens[j + 1]; the last one, what would follow); the NLL of the tokens
// from first_perplexity + 1 on makes the perplexity.
struct QualitySequence {
  std::vector<int32_t> tokens;
  int64_t first_perplexity = 0;
};

// What one timing round measured for one configuration (summed over the prompts).
struct RoundTotals {
  double prefill_ms = 0, decode_ms = 0, ttft_ms = 0;
  double prefilled = 0, decoded = 0;
};

int64_t effective_context(const CompareConfig& c, const Model& model) {
  return c.n_ctx > 0 ? c.n_ctx : std::min<int64_t>(std::max<int64_t>(model.config().n_ctx_train, 1), 4096);
}

int effective_threads(const CompareConfig& c) {
  return c.n_threads > 0 ? c.n_threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Same vocabulary: token ids mean the same text in both models, so distributions compare.
bool same_vocabulary(const Model& a, const Model& b) {
  if (&a == &b) return true;
  const Tokenizer& x = a.tokenizer();
  const Tokenizer& y = b.tokenizer();
  if (x.n_vocab() != y.n_vocab() || a.config().n_vocab != b.config().n_vocab) return false;
  for (int32_t id = 0; id < x.n_vocab(); ++id) {
    if (x.token_text(id) != y.token_text(id)) return false;
  }
  return true;
}

// KV bytes in the blocks that hold something (referenced by a sequence or cached).
uint64_t kv_bytes_used(const MemoryUsage& m) {
  const KvBlockStats& b = m.kv_blocks;
  const int64_t blocks = int64_t(b.referenced) + b.cached + b.free;
  if (blocks <= 0) return 0;
  return m.kv_cache_bytes / static_cast<uint64_t>(blocks) * static_cast<uint64_t>(b.referenced + b.cached);
}

class Runner {
 public:
  Runner(const ComparisonOptions& options, const ComparisonCallbacks& callbacks)
      : options_(options), callbacks_(callbacks) {
    result_.options = options;
    const size_t n = options.configs.size();
    result_.configs.resize(n);
    sessions_.resize(n);
    templates_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      result_.configs[i].config = options.configs[i];
      result_.configs[i].config.label = config_label(options.configs[i], i);
      result_.options.configs[i].label = result_.configs[i].config.label;
    }
    const int n_quality = static_cast<int>(options.prompts.size()) + (options.quality_text.empty() ? 0 : 1);
    progress_.total = static_cast<int>(n) * (1 + options.reps * static_cast<int>(options.prompts.size()) + n_quality);
  }

  ComparisonResult run() {
    for (size_t i = 0; i < sessions_.size() && !cancelled(); ++i) load(i);
    std::vector<std::vector<RoundTotals>> rounds(sessions_.size());
    for (int r = 0; r < options_.reps && !cancelled(); ++r) {
      for (size_t i = 0; i < sessions_.size() && !cancelled(); ++i) {
        if (sessions_[i]) rounds[i].push_back(timing_round(r, i));
      }
    }
    for (size_t i = 0; i < sessions_.size(); ++i) summarize_speed(i, rounds[i]);
    if (!cancelled()) quality();
    for (size_t i = 0; i < sessions_.size(); ++i) {
      if (!sessions_[i]) continue;
      result_.configs[i].memory = sessions_[i]->memory();
      result_.configs[i].kv_bytes_used = kv_bytes_used(result_.configs[i].memory);
    }
    result_.cancelled = cancelled();
    return std::move(result_);
  }

 private:
  bool cancelled() const { return callbacks_.cancel != nullptr && callbacks_.cancel->load(); }

  void report(std::string stage) {
    progress_.stage = std::move(stage);
    if (callbacks_.on_progress) callbacks_.on_progress(progress_);
  }
  void step_done() {
    ++progress_.done;
    if (callbacks_.on_progress) callbacks_.on_progress(progress_);
  }

  void refuse(size_t i, const std::string& reason) {
    result_.configs[i].ran = false;
    result_.configs[i].refusal = reason;
    sessions_[i].reset();
    templates_[i].reset();
  }

  Result<std::shared_ptr<const Model>> model_for(const CompareConfig& c) {
    const std::string path = c.model_path.empty() ? options_.default_model : c.model_path;
    const auto key = std::make_pair(path, c.weights);
    if (auto it = models_.find(key); it != models_.end()) return it->second;
    ModelLoadOptions lo;
    lo.n_ctx = c.n_ctx;
    lo.n_threads = effective_threads(c);
    auto model = load_model_as(path, c.weights, lo, lo.n_threads);
    if (model) models_[key] = *model;
    return model;
  }

  void load(size_t i) {
    ConfigResult& r = result_.configs[i];
    report("loading " + r.config.label);
    const auto start = Clock::now();
    auto model = model_for(r.config);
    if (!model) {
      refuse(i, model.message());
      step_done();
      return;
    }
    const Model& m = **model;
    r.model_name = m.file().path();
    const int64_t n_ctx = effective_context(r.config, m);
    r.predicted = estimate_memory(m.file(), m.config(), n_ctx, effective_threads(r.config), 256, r.config.kv_types);
    SessionOptions so;
    so.n_ctx = r.config.n_ctx;
    so.n_threads = r.config.n_threads;
    so.kv_types = r.config.kv_types;
    so.cache = r.config.cache;
    so.backend = r.config.backend;
    auto session = Session::create(*model, so);
    const Status chat = options_.chat ? use_chat_template(i, m) : Status::ok();
    if (!session) {
      refuse(i, session.message());
    } else if (!chat) {
      refuse(i, chat.message());
    } else {
      sessions_[i] = std::move(*session);
      r.ran = true;
      r.backend_name = sessions_[i]->executor().backend_name();
    }
    r.load_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    step_done();
  }

  RoundTotals timing_round(int round, size_t i) {
    ConfigResult& r = result_.configs[i];
    Session& session = *sessions_[i];
    session.clear_cache();
    RoundTotals totals;
    for (size_t p = 0; p < options_.prompts.size() && !cancelled(); ++p) {
      report("round " + std::to_string(round + 1) + "/" + std::to_string(options_.reps) + ": " + r.config.label +
             ", prompt " + std::to_string(p + 1) + "/" + std::to_string(options_.prompts.size()));
      auto request = request_for(i, options_.prompts[p]);
      if (!request) {
        refuse(i, "prompt " + std::to_string(p + 1) + ": " + request.message());
        return totals;
      }
      auto generated = session.generate(*request, [this](const TokenEvent&) { return !cancelled(); });
      if (!generated) {
        refuse(i, "failed on prompt " + std::to_string(p + 1) + ": " + generated.message());
        return totals;
      }
      const GenerateTimings& t = generated->timings;
      totals.prefill_ms += t.prefill_ms;
      totals.decode_ms += t.decode_ms;
      totals.ttft_ms += t.ttft_ms;
      totals.prefilled += static_cast<double>(generated->prompt_token_ids.size() - generated->reused_tokens);
      totals.decoded += std::round(t.decode_tokens_per_s * t.decode_ms / 1000.0);
      if (round == 0) record_reply(i, *generated);
      step_done();
    }
    totals.ttft_ms /= static_cast<double>(std::max<size_t>(1, options_.prompts.size()));
    return totals;
  }

  Status use_chat_template(size_t i, const Model& m) {
    auto chat_template = ChatTemplate::for_chat(m.file(), m.tokenizer());
    if (!chat_template) return chat_template.status();
    templates_[i] = std::make_unique<ChatTemplate>(std::move(*chat_template));
    return Status::ok();
  }

  // A prompt as a plain completion, or as one user turn in the configuration's chat format.
  Result<GenerateRequest> request_for(size_t i, const std::string& prompt) {
    GenerateRequest request;
    if (templates_[i]) {
      const Session& s = *sessions_[i];
      auto chat = build_chat_prompt(s.model().tokenizer(), *templates_[i], {{"user", prompt}}, s.n_ctx(),
                                    options_.max_tokens);
      if (!chat) return chat.status();
      request = chat->request;
    } else {
      request.prompt = prompt;
    }
    request.max_tokens = options_.max_tokens;
    request.sampling = options_.sampling;
    return request;
  }

  void record_reply(size_t i, const GenerateResult& g) {
    ConfigResult& r = result_.configs[i];
    r.replies.push_back(g.text);
    r.reply_token_counts.push_back(static_cast<int32_t>(g.token_ids.size()));
    r.prompt_tokens += static_cast<int64_t>(g.prompt_token_ids.size());
    r.reused_tokens += g.reused_tokens;
    if (i != 0) return;
    QualitySequence seq;
    seq.tokens = g.prompt_token_ids;
    seq.tokens.insert(seq.tokens.end(), g.token_ids.begin(), g.token_ids.end());
    seq.first_perplexity = static_cast<int64_t>(g.prompt_token_ids.size()) - 1;
    quality_sequences_.push_back(std::move(seq));
  }

  void summarize_speed(size_t i, const std::vector<RoundTotals>& rounds) {
    if (!sessions_[i] || rounds.empty()) return;
    std::vector<double> prefill, decode, ttft;
    for (const RoundTotals& t : rounds) {
      prefill.push_back(t.prefill_ms > 0 ? 1000.0 * t.prefilled / t.prefill_ms : 0.0);
      decode.push_back(t.decode_ms > 0 ? 1000.0 * t.decoded / t.decode_ms : 0.0);
      ttft.push_back(t.ttft_ms);
    }
    ConfigResult& r = result_.configs[i];
    r.prefill_tokens_per_s = Spread::of(prefill);
    r.decode_tokens_per_s = Spread::of(decode);
    r.ttft_ms = Spread::of(ttft);
  }

  // The quality text, when given, replaces the replies: in the baseline's tokens, every
  // position scored.
  void use_quality_text() {
    if (options_.quality_text.empty()) return;
    QualitySequence seq;
    seq.tokens = sessions_[0]->model().tokenizer().encode(options_.quality_text, true, false);
    quality_sequences_.assign(1, std::move(seq));
  }

  // Cuts every sequence to the smallest context of the configurations that ran.
  void fit_sequences_to_contexts() {
    int64_t n_ctx = INT64_MAX;
    for (const auto& s : sessions_) {
      if (s) n_ctx = std::min(n_ctx, s->n_ctx());
    }
    for (QualitySequence& seq : quality_sequences_) {
      if (static_cast<int64_t>(seq.tokens.size()) > n_ctx) seq.tokens.resize(static_cast<size_t>(n_ctx));
    }
  }

  void quality() {
    if (!sessions_[0]) {
      for (ConfigResult& r : result_.configs) r.quality_note = "the baseline did not run";
      return;
    }
    use_quality_text();
    fit_sequences_to_contexts();
    const Model& base_model = sessions_[0]->model();
    const int64_t n_vocab = base_model.config().n_vocab;
    std::vector<QualityAccumulator> acc(sessions_.size());
    std::vector<float> base, cand;
    for (size_t s = 0; s < quality_sequences_.size() && !cancelled(); ++s) {
      const QualitySequence& seq = quality_sequences_[s];
      const int64_t n = static_cast<int64_t>(seq.tokens.size());
      report("quality: sequence " + std::to_string(s + 1) + "/" + std::to_string(quality_sequences_.size()));
      if (n < 1) {
        progress_.done += static_cast<int>(sessions_.size());
        continue;
      }
      if (!evaluate(0, seq, base)) {
        for (ConfigResult& r : result_.configs) r.quality_note = "the baseline's evaluation failed: " + base_error_;
        return;
      }
      step_done();
      for (size_t i = 0; i < sessions_.size() && !cancelled(); ++i) {
        if (!sessions_[i] || !comparable(i, base_model)) {
          if (i != 0) step_done();
          continue;
        }
        const std::vector<float>* logits = &base;
        if (i != 0) {
          if (!evaluate(i, seq, cand)) continue;
          logits = &cand;
          step_done();
        }
        for (int64_t j = 0; j < n; ++j) {
          const int32_t target = j + 1 < n ? seq.tokens[static_cast<size_t>(j + 1)] : -1;
          const PositionQuality q =
              compare_position(base.data() + j * n_vocab, logits->data() + j * n_vocab, n_vocab, target);
          acc[i].add(q, static_cast<int32_t>(s), j, target, target >= 0 && j >= seq.first_perplexity);
        }
      }
    }
    for (size_t i = 0; i < sessions_.size(); ++i) {
      ConfigResult& r = result_.configs[i];
      if (!sessions_[i] || !r.quality_note.empty()) continue;
      r.quality_comparable = true;
      r.quality = acc[i].figures();
      if (r.quality.worst.target >= 0) r.worst_token_text = base_model.tokenizer().token_to_piece(r.quality.worst.target);
    }
  }

  bool comparable(size_t i, const Model& base_model) {
    ConfigResult& r = result_.configs[i];
    if (!r.quality_note.empty()) return false;
    if (!same_vocabulary(base_model, sessions_[i]->model())) {
      r.quality_note = "a different vocabulary than the baseline's: its distributions do not compare";
      return false;
    }
    return true;
  }

  bool evaluate(size_t i, const QualitySequence& seq, std::vector<float>& logits) {
    const Status st = sessions_[i]->evaluate(seq.tokens, logits);
    if (st) return true;
    if (i == 0) base_error_ = st.message();
    else result_.configs[i].quality_note = "evaluation failed: " + st.message();
    return false;
  }

  const ComparisonOptions& options_;
  const ComparisonCallbacks& callbacks_;
  ComparisonResult result_;
  std::vector<std::unique_ptr<Session>> sessions_;  // nullptr: refused
  std::vector<std::unique_ptr<ChatTemplate>> templates_;  // with options.chat: each one's chat format
  std::map<std::pair<std::string, std::string>, std::shared_ptr<const Model>> models_;
  std::vector<QualitySequence> quality_sequences_;
  std::string base_error_;
  ComparisonProgress progress_;
};

}  // namespace

SamplingParams ComparisonOptions::greedy() {
  SamplingParams s;
  s.temperature = 0;
  return s;
}

Spread Spread::of(std::vector<double> samples) {
  Spread s;
  s.samples = samples;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  s.median = n % 2 == 1 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  s.min = samples.front();
  s.max = samples.back();
  return s;
}

std::string config_label(const CompareConfig& config, size_t index) {
  if (!config.label.empty()) return config.label;
  return index == 0 ? "baseline" : "candidate " + std::to_string(index);
}

Result<ComparisonResult> run_comparison(const ComparisonOptions& options, const ComparisonCallbacks& callbacks) {
  if (options.configs.size() < 2 || options.configs.size() > 4) {
    return Status::error("a comparison needs a baseline and 1 to 3 candidates (" +
                         std::to_string(options.configs.size()) + " configurations given)");
  }
  if (options.prompts.empty()) return Status::error("a comparison needs at least one prompt");
  if (options.reps < 1) return Status::error("repetitions must be >= 1");
  if (options.max_tokens < 1) return Status::error("max tokens must be >= 1");
  INFERSCOPE_RETURN_IF_ERROR(options.sampling.validate());
  return Runner(options, callbacks).run();
}

}  // namespace inferscope
