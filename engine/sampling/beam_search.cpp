// Beam search over BeamSearchModel. Beam i always lives in slot i; between rounds the slots are
// permuted with reorder_slots so each surviving beam sits on its parent's KV state.
#include "engine/sampling/beam_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "engine/sampling/top_k.h"

namespace inferscope {
namespace {

struct Beam {
  std::vector<int32_t> tokens;
  double logprob = 0.0;  // sum of the tokens' log-probabilities
  double score = 0.0;    // logprob length-normalised; what beams are ranked by
  bool finished = false;
};

struct Candidate {
  int32_t parent;  // index of the beam it extends (or carries, for a finished beam)
  int32_t token;   // -1: the finished parent carried over unchanged
  double logprob;
  double score;
  bool finished;
};

double length_normalised(double logprob, size_t length, float length_penalty) {
  if (length_penalty == 0.0f) return logprob;
  return logprob / std::pow(static_cast<double>(length), static_cast<double>(length_penalty));
}

class Searcher {
 public:
  Searcher(BeamSearchModel& model, const BeamSearchParams& params,
           const std::function<void(int32_t)>& on_token)
      : model_(model), params_(params), on_token_(on_token), width_(params.beam_width) {}

  Result<std::vector<int32_t>> run(std::span<const float> first_logits) {
    // Round 0: every beam descends from the prompt state in slot 0.
    candidates_.clear();
    expand(first_logits, 0, 0.0, 1);
    std::vector<Beam> no_beams;
    INFERSCOPE_RETURN_IF_ERROR(select(no_beams, /*parents_are_prompt=*/true));
    size_t length = 1;
    while (length < static_cast<size_t>(params_.max_tokens)) {
      live_slots_.clear();
      live_tokens_.clear();
      for (size_t i = 0; i < beams_.size(); ++i) {
        if (beams_[i].finished) continue;
        live_slots_.push_back(static_cast<int32_t>(i));
        live_tokens_.push_back(beams_[i].tokens.back());
      }
      if (live_slots_.empty()) break;
      INFERSCOPE_RETURN_IF_ERROR(model_.decode(live_slots_, live_tokens_, logits_));
      if (logits_.size() != live_slots_.size())
        return Status::error("beam_search: decode returned " + std::to_string(logits_.size()) +
                             " logits rows for " + std::to_string(live_slots_.size()) + " beams");

      candidates_.clear();
      size_t row = 0;
      for (size_t i = 0; i < beams_.size(); ++i) {
        const Beam& beam = beams_[i];
        if (beam.finished) {
          candidates_.push_back({static_cast<int32_t>(i), -1, beam.logprob, beam.score, true});
          continue;
        }
        const std::vector<float>& logits = logits_[row++];
        if (logits.size() != static_cast<size_t>(model_.n_vocab()))
          return Status::error("beam_search: decode returned " + std::to_string(logits.size()) +
                               " logits for a beam, expected n_vocab = " +
                               std::to_string(model_.n_vocab()));
        expand(logits, static_cast<int32_t>(i), beam.logprob, length + 1);
      }
      std::vector<Beam> previous = std::move(beams_);
      INFERSCOPE_RETURN_IF_ERROR(select(previous, /*parents_are_prompt=*/false));
      ++length;
    }
    // beams_ is sorted by score, ties in favour of the earlier candidate.
    emit(beams_.front().tokens.size());
    return beams_.front().tokens;
  }

 private:
  // Appends the width_ most likely continuations of a beam to candidates_.
  void expand(std::span<const float> logits, int32_t parent, double parent_logprob,
              size_t new_length) {
    select_top_k(logits, width_, top_);
    const double lse = log_sum_exp(logits);
    for (const TokenLogit& t : top_) {
      const double logprob = lse == -std::numeric_limits<double>::infinity()
                                 ? -std::numeric_limits<double>::infinity()  // all masked
                                 : parent_logprob + (static_cast<double>(t.logit) - lse);
      candidates_.push_back({parent, t.id, logprob,
                             length_normalised(logprob, new_length, params_.length_penalty),
                             model_.is_end_of_generation(t.id)});
    }
  }

  // Keeps the best width_ candidates as the new beams_ and moves the KV states to match.
  Status select(const std::vector<Beam>& previous, bool parents_are_prompt) {
    std::stable_sort(candidates_.begin(), candidates_.end(),
                     [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
    const size_t n = std::min(candidates_.size(), static_cast<size_t>(width_));
    beams_.clear();
    parents_.clear();
    bool identity = true;
    for (size_t i = 0; i < n; ++i) {
      const Candidate& c = candidates_[i];
      Beam beam;
      if (!parents_are_prompt) beam.tokens = previous[static_cast<size_t>(c.parent)].tokens;
      if (c.token >= 0) beam.tokens.push_back(c.token);
      beam.logprob = c.logprob;
      beam.score = c.score;
      beam.finished = c.finished;
      beams_.push_back(std::move(beam));
      // A finished beam is never decoded again, so its slot's contents do not matter.
      const int32_t parent = c.finished ? static_cast<int32_t>(i) : c.parent;
      identity = identity && parent == static_cast<int32_t>(i);
      parents_.push_back(parent);
    }
    if (!identity) INFERSCOPE_RETURN_IF_ERROR(model_.reorder_slots(parents_));
    emit(common_prefix_length());
    return Status::ok();
  }

  size_t common_prefix_length() const {
    const std::vector<int32_t>& first = beams_.front().tokens;
    size_t common = first.size();
    for (const Beam& beam : beams_) {
      const auto mismatch = std::mismatch(first.begin(), first.begin() + static_cast<std::ptrdiff_t>(common),
                                          beam.tokens.begin(), beam.tokens.end());
      common = static_cast<size_t>(mismatch.first - first.begin());
    }
    return common;
  }

  // Streams beams_[0]'s tokens up to `count`: the ones no future round can change.
  void emit(size_t count) {
    if (!on_token_) return;
    const std::vector<int32_t>& tokens = beams_.front().tokens;
    for (; emitted_ < count; ++emitted_) on_token_(tokens[emitted_]);
  }

  BeamSearchModel& model_;
  const BeamSearchParams& params_;
  const std::function<void(int32_t)>& on_token_;
  const int32_t width_;
  size_t emitted_ = 0;

  std::vector<Beam> beams_;  // beam i lives in KV slot i; sorted by score
  std::vector<Candidate> candidates_;
  std::vector<int32_t> parents_;
  std::vector<int32_t> live_slots_;
  std::vector<int32_t> live_tokens_;
  std::vector<std::vector<float>> logits_;
  std::vector<TokenLogit> top_;
};

}  // namespace

Status BeamSearchParams::validate() const {
  if (beam_width < 1)
    return Status::error("beam search parameter beam_width = " + std::to_string(beam_width) +
                         ": expected >= 1");
  if (max_tokens < 0)
    return Status::error("beam search parameter max_tokens = " + std::to_string(max_tokens) +
                         ": expected >= 0");
  if (!std::isfinite(length_penalty))
    return Status::error("beam search parameter length_penalty = " + std::to_string(length_penalty) +
                         ": expected a finite value (0 = rank by raw log-probability)");
  return Status::ok();
}

Result<std::vector<int32_t>> beam_search(BeamSearchModel& model, std::span<const float> first_logits,
                                         const BeamSearchParams& params,
                                         const std::function<void(int32_t)>& on_token) {
  INFERSCOPE_RETURN_IF_ERROR(params.validate());
  const int32_t n_vocab = model.n_vocab();
  if (n_vocab <= 0)
    return Status::error("beam_search: model n_vocab = " + std::to_string(n_vocab) + ": expected > 0");
  if (first_logits.size() != static_cast<size_t>(n_vocab))
    return Status::error("beam_search: first_logits has " + std::to_string(first_logits.size()) +
                         " values, expected n_vocab = " + std::to_string(n_vocab));
  if (params.max_tokens == 0) return std::vector<int32_t>{};
  Searcher searcher(model, params, on_token);
  return searcher.run(first_logits);
}

}  // namespace inferscope
