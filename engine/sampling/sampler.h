// Sampler: picks the next token from a logits vector with llama.cpp's default chain
// (penalties -> top-k -> top-p -> min-p -> temperature -> seeded draw). Also top_logprobs(),
// the raw per-token log-probabilities that an API or the UI shows next to each token.
#pragma once

#include <array>
#include <cstdint>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "engine/core/status.h"
#include "engine/sampling/sampling_params.h"
#include "engine/sampling/top_k.h"

namespace inferscope {

struct TokenProb {
  int32_t id;
  float p;
};

// One per generation stream (not thread-safe). Deterministic: the same seed, logits and accepted
// tokens give the same tokens (mt19937_64, our own [0,1) conversion, arithmetic in a fixed
// order, so x86-64 CPUs with and without AVX2 agree bit for bit); a seed is not guaranteed to
// replay across Inferscope versions. Cost per token on a 152k vocabulary: one
// or two vectorised passes plus work proportional to the surviving tokens; no full sort.
class Sampler {
 public:
  // Out-of-range params are not rejected here (create() does that): they act like llama.cpp,
  // e.g. temperature < 0 is greedy, top_k < 0 and top_p >= 1 disable the filter. n_vocab > 0.
  Sampler(SamplingParams params, int32_t n_vocab);
  // Same, but fails with params.validate()'s message, or on n_vocab <= 0.
  static Result<Sampler> create(SamplingParams params, int32_t n_vocab);

  // logits.size() == n_vocab. Does not modify the caller's logits; allocation-free after
  // construction. Masked tokens may be -inf; NaN counts as -inf, +inf as the largest float.
  int32_t sample(std::span<const float> logits);
  // Records a token for the penalties. Accept the prompt tokens too, as llama.cpp does.
  // 0 <= token < n_vocab.
  void accept(int32_t token);
  // Forgets accepted tokens and re-seeds: with a fixed seed, the same draws start over; with
  // kRandomSeed a new random seed is picked.
  void reset();

  const SamplingParams& params() const { return params_; }
  int32_t n_vocab() const { return n_vocab_; }
  // The seed in use: params().seed, or the one picked when that is kRandomSeed (log it to
  // reproduce a run).
  uint64_t seed() const { return seed_; }

  // Applies the repetition / frequency / presence penalties for the accepted tokens in place
  // (logits.size() == n_vocab); the first stage of sample().
  void apply_penalties(std::span<float> logits) const;
  // The distribution the next sample() draws from, after every stage, most likely first
  // (ties -> lower id). For inspection and tests; allocates. Uses no randomness.
  std::vector<TokenProb> distribution(std::span<const float> logits);

 private:
  bool greedy() const { return !(params_.temperature > 0.0f); }
  // Penalised copy of logits in scratch, or logits itself when no penalty applies.
  std::span<const float> penalised(std::span<const float> logits);
  // Runs top-k, top-p and min-p; leaves the surviving tokens in candidates_ and their
  // unnormalised temperature-scaled weights in weights_; returns the weights' sum.
  double filter(std::span<const float> logits);
  // top-p over candidates_ already ranked (after top-k) / in id order (no top-k): keeps the
  // most likely tokens until their weight exp(logit - max) reaches target.
  void keep_top_p_sorted(float max, double target);
  void keep_top_p_unsorted(float max, double target);
  // weights_[i] = exp((candidates_[i].logit - max) / temperature).
  void exp_weights(float max, float temperature);
  double uniform01();

  SamplingParams params_;
  int32_t n_vocab_;
  uint64_t seed_ = 0;
  std::mt19937_64 rng_;

  // Penalty window: counts per token over the last repeat_last_n accepted tokens, and the list
  // of tokens whose count is > 0 so sample() touches only those.
  bool penalties_active_ = false;
  std::vector<int32_t> ring_;  // the window, when repeat_last_n > 0
  size_t ring_head_ = 0;       // next slot to write
  size_t ring_size_ = 0;
  std::vector<int32_t> counts_;
  std::vector<int32_t> present_;       // tokens with counts_ > 0
  std::vector<int32_t> present_slot_;  // token -> index in present_

  // Scratch, sized once in the constructor.
  std::vector<float> penalised_;
  static constexpr size_t kTopPBuckets = 512;  // 32 nats below the max; the rest share the last
  std::vector<TokenLogit> candidates_;
  std::vector<TokenLogit> crossing_;  // top-p: the bucket that straddles the cut
  std::vector<uint16_t> buckets_;     // top-p: histogram bucket per candidate
  std::vector<float> weights_;
  std::array<double, kTopPBuckets> top_p_mass_;
};

// Natural-log probabilities of the min(k, n) most likely tokens under the raw distribution
// (log-softmax of the logits, no penalties or filters), most likely first, ties -> lower id.
std::vector<std::pair<int32_t, float>> top_logprobs(std::span<const float> logits, int32_t k);

}  // namespace inferscope
