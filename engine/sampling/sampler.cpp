// The sampler chain. Stages follow llama.cpp's default order and semantics; the work per token is
// O(vocab) passes plus sorting only the tokens that can survive the filters.
#include "engine/sampling/sampler.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <chrono>
#include <cmath>
#include <limits>

#include "engine/sampling/logit_math.h"

namespace inferscope {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

}  // namespace

Sampler::Sampler(SamplingParams params, int32_t n_vocab) : params_(params), n_vocab_(n_vocab) {
  assert(n_vocab > 0 && "Sampler: n_vocab must be > 0");
  const size_t n = static_cast<size_t>(n_vocab);
  penalties_active_ = params_.repeat_last_n != 0 &&
                      (params_.repeat_penalty != 1.0f || params_.frequency_penalty != 0.0f ||
                       params_.presence_penalty != 0.0f);
  if (penalties_active_) {
    counts_.assign(n, 0);
    present_slot_.assign(n, 0);
    if (params_.repeat_last_n > 0) {
      ring_.assign(static_cast<size_t>(params_.repeat_last_n), 0);
      present_.reserve(std::min(n, ring_.size()));
    } else {
      present_.reserve(n);
    }
    penalised_.resize(n);
  }
  candidates_.reserve(n);
  crossing_.reserve(n);
  buckets_.resize(n);
  weights_.resize(n);
  reset();
}

Result<Sampler> Sampler::create(SamplingParams params, int32_t n_vocab) {
  if (Status st = params.validate(); !st.is_ok()) return st;
  if (n_vocab <= 0)
    return Result<Sampler>::error("Sampler: n_vocab = " + std::to_string(n_vocab) +
                                  ": expected > 0");
  return Sampler(params, n_vocab);
}

void Sampler::reset() {
  if (params_.seed == SamplingParams::kRandomSeed) {
    try {
      std::random_device device;
      seed_ = (static_cast<uint64_t>(device()) << 32) ^ device();
    } catch (...) {  // no entropy source: the clock is random enough to pick a seed
      seed_ = static_cast<uint64_t>(std::chrono::high_resolution_clock::now().time_since_epoch().count());
    }
  } else {
    seed_ = params_.seed;
  }
  rng_.seed(seed_);
  for (const int32_t token : present_) counts_[static_cast<size_t>(token)] = 0;
  present_.clear();
  ring_head_ = 0;
  ring_size_ = 0;
}

void Sampler::accept(int32_t token) {
  assert(token >= 0 && token < n_vocab_ && "Sampler::accept: token id out of range");
  if (!penalties_active_) return;
  if (!ring_.empty()) {
    if (ring_size_ == ring_.size()) {
      const auto evicted = static_cast<size_t>(ring_[ring_head_]);
      if (--counts_[evicted] == 0) {  // swap-remove from present_
        const int32_t moved = present_.back();
        present_[static_cast<size_t>(present_slot_[evicted])] = moved;
        present_slot_[static_cast<size_t>(moved)] = present_slot_[evicted];
        present_.pop_back();
      }
    } else {
      ++ring_size_;
    }
    ring_[ring_head_] = token;
    ring_head_ = (ring_head_ + 1) % ring_.size();
  }
  const auto t = static_cast<size_t>(token);
  if (counts_[t]++ == 0) {
    present_slot_[t] = static_cast<int32_t>(present_.size());
    present_.push_back(token);
  }
}

void Sampler::apply_penalties(std::span<float> logits) const {
  assert(logits.size() == static_cast<size_t>(n_vocab_));
  if (!penalties_active_) return;
  for (const int32_t token : present_) {
    const int32_t count = counts_[static_cast<size_t>(token)];
    float& logit = logits[static_cast<size_t>(token)];
    // Dividing a negative logit would raise its probability, hence the sign split (as llama.cpp).
    if (logit <= 0.0f)
      logit *= params_.repeat_penalty;
    else
      logit /= params_.repeat_penalty;
    logit -= static_cast<float>(count) * params_.frequency_penalty + params_.presence_penalty;
  }
}

std::span<const float> Sampler::penalised(std::span<const float> logits) {
  if (!penalties_active_ || present_.empty()) return logits;
  std::copy(logits.begin(), logits.end(), penalised_.begin());
  apply_penalties(penalised_);
  return penalised_;
}

double Sampler::filter(std::span<const float> logits) {
  const size_t n = logits.size();
  const bool use_top_k = params_.top_k > 0 && static_cast<size_t>(params_.top_k) < n;
  const bool use_top_p = params_.top_p < 1.0f;
  float max = kNegInf;
  if (use_top_k) {
    select_top_k(logits, params_.top_k, candidates_);
    max = candidates_.front().logit;
  } else {
    max = max_logit(logits);
  }
  if (max == kNegInf) {  // every token masked: nothing to weigh, take the lowest id
    candidates_.assign(1, TokenLogit{0, kNegInf});
    weights_[0] = 1.0f;
    return 1.0;
  }

  // top-p's mass is measured over the top-k survivors, before min-p (llama.cpp's order).
  double top_p_target = 0.0;
  if (use_top_p) {
    double total = 0.0;
    if (use_top_k) {
      for (const TokenLogit& c : candidates_) total += exp_nonpositive(c.logit - max);
    } else {
      total = sum_exp(logits, max);
    }
    top_p_target = static_cast<double>(params_.top_p) * total;
  }

  // min-p: p_i >= min_p * p_max, i.e. logit_i >= max + log(min_p). Both top-p and min-p keep a
  // prefix of the ranked list and together keep the shorter prefix, so min-p can run first
  // here and spare top-p from ranking tokens min-p drops anyway. Without min-p only masked
  // tokens (-inf, weight 0) are dropped.
  const float threshold = params_.min_p > 0.0f
                              ? max + std::log(std::min(params_.min_p, 1.0f))
                              : std::numeric_limits<float>::lowest();
  if (use_top_k) {
    size_t kept = 0;  // sorted, so this truncates
    while (kept < candidates_.size() && candidates_[kept].logit >= threshold) ++kept;
    candidates_.resize(kept);
  } else {
    select_at_least(logits, threshold, candidates_);
  }

  if (use_top_p) {
    if (use_top_k)
      keep_top_p_sorted(max, top_p_target);
    else
      keep_top_p_unsorted(max, top_p_target);
  }

  exp_weights(max, params_.temperature);
  return sum_floats(std::span<const float>(weights_.data(), candidates_.size()));
}

void Sampler::exp_weights(float max, float temperature) {
  // Kept separate from any accumulation so it vectorises; a scalar loop over exp_nonpositive
  // is several times slower.
  const size_t n = candidates_.size();
  const TokenLogit* c = candidates_.data();
  float* w = weights_.data();
  for (size_t i = 0; i < n; ++i) w[i] = exp_nonpositive((c[i].logit - max) / temperature);
}

void Sampler::keep_top_p_sorted(float max, double target) {
  double cum = 0.0;
  for (size_t i = 0; i < candidates_.size(); ++i) {
    cum += exp_nonpositive(candidates_[i].logit - max);
    if (cum >= target) {
      candidates_.resize(i + 1);
      return;
    }
  }
}

void Sampler::keep_top_p_unsorted(float max, double target) {
  // Histogram the mass by logit (1/16-nat buckets below the max); only the bucket where the
  // cumulative mass crosses the target needs sorting. Tokens in the buckets above are kept
  // unsorted, so a flat 152k distribution costs a few linear passes plus a sort of a few
  // hundred tokens instead of a full sort.
  const size_t n = candidates_.size();
  exp_weights(max, 1.0f);
  {
    // Bucket index = min((max - logit) * 16, last), clamped on the float's bit pattern
    // (non-negative floats order like their bits) so the loop vectorises.
    constexpr float kBucketsPerNat = 16.0f;
    constexpr int32_t kLastBits = std::bit_cast<int32_t>(static_cast<float>(kTopPBuckets - 1));
    const TokenLogit* c = candidates_.data();
    uint16_t* b = buckets_.data();
    for (size_t i = 0; i < n; ++i) {
      const int32_t bits = std::bit_cast<int32_t>((max - c[i].logit) * kBucketsPerNat);
      const int32_t clamped = bits > kLastBits ? kLastBits : bits;
      b[i] = static_cast<uint16_t>(static_cast<int32_t>(std::bit_cast<float>(clamped)));
    }
  }
  top_p_mass_.fill(0.0);
  for (size_t i = 0; i < n; ++i) top_p_mass_[buckets_[i]] += weights_[i];
  double cum = 0.0;
  size_t crossing = 0;
  for (; crossing < kTopPBuckets; ++crossing) {
    if (cum + top_p_mass_[crossing] >= target) break;
    cum += top_p_mass_[crossing];
  }
  if (crossing == kTopPBuckets) return;  // rounding kept the sum below target: keep all

  crossing_.clear();
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {  // in place: kept <= i
    if (buckets_[i] < crossing)
      candidates_[kept++] = candidates_[i];
    else if (buckets_[i] == crossing)
      crossing_.push_back(candidates_[i]);
  }
  std::sort(crossing_.begin(), crossing_.end(), ranks_before);
  for (const TokenLogit& c : crossing_) {
    candidates_[kept++] = c;
    cum += exp_nonpositive(c.logit - max);
    if (cum >= target) break;
  }
  candidates_.resize(kept);
}

double Sampler::uniform01() {
  // 53 random bits -> [0, 1). Spelled out rather than std::uniform_real_distribution, whose
  // output differs between standard libraries: a seed must replay the same tokens everywhere.
  return static_cast<double>(rng_() >> 11) * 0x1.0p-53;
}

int32_t Sampler::sample(std::span<const float> logits) {
  assert(logits.size() == static_cast<size_t>(n_vocab_) && "Sampler::sample: logits size != n_vocab");
  const std::span<const float> scored = penalised(logits);
  if (greedy()) return argmax_logit(scored);

  const double total = filter(scored);
  const double target = uniform01() * total;
  double cum = 0.0;
  size_t last_nonzero = 0;
  for (size_t i = 0; i < candidates_.size(); ++i) {
    if (weights_[i] <= 0.0f) continue;
    cum += weights_[i];
    if (target < cum) return candidates_[i].id;
    last_nonzero = i;
  }
  return candidates_[last_nonzero].id;  // target rounded up to the total
}

std::vector<TokenProb> Sampler::distribution(std::span<const float> logits) {
  assert(logits.size() == static_cast<size_t>(n_vocab_));
  const std::span<const float> scored = penalised(logits);
  if (greedy()) return {{argmax_logit(scored), 1.0f}};

  const double total = filter(scored);
  std::vector<TokenProb> out;
  out.reserve(candidates_.size());
  for (size_t i = 0; i < candidates_.size(); ++i)
    out.push_back({candidates_[i].id, static_cast<float>(weights_[i] / total)});
  std::sort(out.begin(), out.end(), [](const TokenProb& a, const TokenProb& b) {
    return a.p > b.p || (a.p == b.p && a.id < b.id);
  });
  return out;
}

std::vector<std::pair<int32_t, float>> top_logprobs(std::span<const float> logits, int32_t k) {
  std::vector<TokenLogit> top;
  select_top_k(logits, k, top);
  const double lse = log_sum_exp(logits);
  std::vector<std::pair<int32_t, float>> out;
  out.reserve(top.size());
  for (const TokenLogit& t : top) {
    // All tokens masked: no distribution; report every token as impossible.
    const float logprob = lse == -std::numeric_limits<double>::infinity()
                              ? kNegInf
                              : static_cast<float>(static_cast<double>(t.logit) - lse);
    out.emplace_back(t.id, logprob);
  }
  return out;
}

}  // namespace inferscope
