// Sampler: greedy, seeding, each filter's surviving distribution against hand-computed values,
// empirical draws against those distributions, penalties, top_logprobs, a 50k-vocabulary
// comparison with a straightforward full-sort reference, and allocation-free sampling.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <vector>

#include "engine/sampling/sampler.h"
#include "tests/sampling/allocation_counter.h"

namespace inferscope {
namespace {

SamplingParams plain_params(uint64_t seed = 1234) {
  SamplingParams p;
  p.temperature = 1.0f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.seed = seed;
  return p;
}

// A hand-made vocabulary: token id -> probability at temperature 1. Ids are shuffled relative to
// rank so filters cannot get away with "keep the first ids". Logits = ln(p) + 1.5 (softmax is
// shift-invariant; the offset checks that nothing assumes normalised logits).
constexpr double kProb[8] = {0.07, 0.20, 0.02, 0.30, 0.12, 0.10, 0.15, 0.04};

std::vector<float> hand_logits() {
  std::vector<float> logits;
  for (double p : kProb) logits.push_back(static_cast<float>(std::log(p) + 1.5));
  return logits;
}

struct FilterCase {
  const char* name;
  float temperature;
  int32_t top_k;
  float top_p;
  float min_p;
  std::map<int32_t, double> expected;  // hand-computed; tokens not listed must never be drawn
};

// Token ranks: 3 (.30), 1 (.20), 6 (.15), 4 (.12), 5 (.10), 0 (.07), 7 (.04), 2 (.02).
std::vector<FilterCase> filter_cases() {
  const double s3 = std::sqrt(0.30), s1 = std::sqrt(0.20), s6 = std::sqrt(0.15);
  return {
      {"none_T1", 1.0f, 0, 1.0f, 0.0f,
       {{0, .07}, {1, .20}, {2, .02}, {3, .30}, {4, .12}, {5, .10}, {6, .15}, {7, .04}}},
      // T = 0.5: p^2 / sum(p^2), sum(p^2) = 0.1838
      {"none_T0.5", 0.5f, 0, 1.0f, 0.0f,
       {{0, .0049 / .1838}, {1, .04 / .1838}, {2, .0004 / .1838}, {3, .09 / .1838},
        {4, .0144 / .1838}, {5, .01 / .1838}, {6, .0225 / .1838}, {7, .0016 / .1838}}},
      // top-k 5 keeps .30 .20 .15 .12 .10 (mass .87)
      {"top_k5", 1.0f, 5, 1.0f, 0.0f,
       {{3, .30 / .87}, {1, .20 / .87}, {6, .15 / .87}, {4, .12 / .87}, {5, .10 / .87}}},
      // top-p .7: cumulative .30 .50 .65 .77 -> four tokens (mass .77)
      {"top_p0.7", 1.0f, 0, 0.7f, 0.0f,
       {{3, .30 / .77}, {1, .20 / .77}, {6, .15 / .77}, {4, .12 / .77}}},
      // min-p .2: keep p >= .2 * .30 = .06 -> drops .04 and .02 (mass .94)
      {"min_p0.2", 1.0f, 0, 1.0f, 0.2f,
       {{3, .30 / .94}, {1, .20 / .94}, {6, .15 / .94}, {4, .12 / .94}, {5, .10 / .94},
        {0, .07 / .94}}},
      // top-k 6 (mass .94) -> top-p .8 over renormalised: .319 .532 .691 .819 -> 4 tokens ->
      // min-p .45: .12/.30 = .4 < .45 drops token 4 -> T = 2: weights sqrt(p).
      {"chain_T2", 2.0f, 6, 0.8f, 0.45f,
       {{3, s3 / (s3 + s1 + s6)}, {1, s1 / (s3 + s1 + s6)}, {6, s6 / (s3 + s1 + s6)}}},
      // Order matters: top-p .6 first keeps .30 .20 .15 (cum .65), min-p .45 keeps all three.
      // (min-p first would keep the same three, renormalise to .46 .77 and top-p would keep 2.)
      {"top_p_before_min_p", 1.0f, 0, 0.6f, 0.45f,
       {{3, .30 / .65}, {1, .20 / .65}, {6, .15 / .65}}},
  };
}

SamplingParams case_params(const FilterCase& c, uint64_t seed) {
  SamplingParams p = plain_params(seed);
  p.temperature = c.temperature;
  p.top_k = c.top_k;
  p.top_p = c.top_p;
  p.min_p = c.min_p;
  return p;
}

TEST(Sampler, GreedyIsArgmaxWithTiesToLowestId) {
  SamplingParams p = plain_params();
  p.temperature = 0.0f;
  Sampler sampler(p, 6);
  EXPECT_EQ(sampler.sample(std::vector<float>{0.1f, 2.5f, -3.0f, 2.5f, 1.0f, 2.4f}), 1);
  EXPECT_EQ(sampler.sample(std::vector<float>{9.0f, 0, 0, 0, 0, 9.0f}), 0);
  EXPECT_EQ(sampler.sample(std::vector<float>{-5, -4, -3, -2, -1, -1.5f}), 4);
  // Negative temperature (rejected by validate, but tolerated like llama.cpp) is greedy too.
  p.temperature = -1.0f;
  Sampler negative(p, 6);
  EXPECT_EQ(negative.sample(std::vector<float>{0.1f, 2.5f, -3.0f, 2.5f, 1.0f, 2.4f}), 1);
  const auto dist = sampler.distribution(std::vector<float>{0, 7, 7, 1, 1, 1});
  ASSERT_EQ(dist.size(), 1u);
  EXPECT_EQ(dist[0].id, 1);
  EXPECT_EQ(dist[0].p, 1.0f);
}

TEST(Sampler, TopK1EqualsGreedy) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> level(-8, 8);  // coarse values: frequent ties
  SamplingParams greedy_p = plain_params();
  greedy_p.temperature = 0.0f;
  SamplingParams top1_p = plain_params(99);
  top1_p.top_k = 1;
  top1_p.temperature = 1.5f;
  Sampler greedy(greedy_p, 300), top1(top1_p, 300);
  std::vector<float> logits(300);
  for (int round = 0; round < 200; ++round) {
    for (float& x : logits) x = static_cast<float>(level(rng));
    ASSERT_EQ(top1.sample(logits), greedy.sample(logits)) << "round " << round;
  }
}

std::vector<int32_t> draw_sequence(Sampler& sampler, const std::vector<float>& logits, int n) {
  std::vector<int32_t> out;
  for (int i = 0; i < n; ++i) out.push_back(sampler.sample(logits));
  return out;
}

TEST(Sampler, SeedMakesDrawsReproducible) {
  const std::vector<float> logits = hand_logits();
  Sampler a(plain_params(42), 8), b(plain_params(42), 8), c(plain_params(43), 8);
  const auto seq_a = draw_sequence(a, logits, 64);
  EXPECT_EQ(seq_a, draw_sequence(b, logits, 64));
  EXPECT_NE(seq_a, draw_sequence(c, logits, 64));
  a.reset();  // restarts the same stream
  EXPECT_EQ(seq_a, draw_sequence(a, logits, 64));
  EXPECT_EQ(a.seed(), 42u);
}

TEST(Sampler, SeedStreamIsStableAcrossBuilds) {
  // Regression pin: mt19937_64 is fully specified and the [0,1) conversion is our own, so a
  // seed must give these tokens with any compiler or standard library. If this changes,
  // saved seeds stop replaying.
  Sampler sampler(plain_params(2024), 8);
  const std::vector<int32_t> expected = {4, 5, 1, 3, 0, 1, 6, 3, 1, 3, 3, 4, 6, 5, 0, 1, 3, 6, 5, 3};
  EXPECT_EQ(draw_sequence(sampler, hand_logits(), 20), expected);
}

TEST(Sampler, RandomSeedIsPickedAndReported) {
  Sampler a(plain_params(SamplingParams::kRandomSeed), 8);
  Sampler b(plain_params(SamplingParams::kRandomSeed), 8);
  EXPECT_NE(a.seed(), b.seed());  // 2^-64 chance of a false failure
  // The reported seed replays the stream.
  Sampler replay(plain_params(a.seed()), 8);
  EXPECT_EQ(draw_sequence(a, hand_logits(), 32), draw_sequence(replay, hand_logits(), 32));
}

TEST(Sampler, FilteredDistributionMatchesHandComputed) {
  const std::vector<float> logits = hand_logits();
  for (const FilterCase& c : filter_cases()) {
    SCOPED_TRACE(c.name);
    Sampler sampler(case_params(c, 1), 8);
    const std::vector<TokenProb> dist = sampler.distribution(logits);
    ASSERT_EQ(dist.size(), c.expected.size());
    for (size_t i = 0; i < dist.size(); ++i) {
      ASSERT_TRUE(c.expected.count(dist[i].id)) << "unexpected token " << dist[i].id;
      EXPECT_NEAR(dist[i].p, c.expected.at(dist[i].id), 2e-6) << "token " << dist[i].id;
      if (i > 0) {
        EXPECT_GE(dist[i - 1].p, dist[i].p);
      }
    }
  }
}

TEST(Sampler, EmpiricalDrawsMatchFilteredSoftmax) {
  // Pearson chi-square with df = kept - 1 <= 7. 45 is beyond the 1e-6 tail for df = 7, while an
  // error of 0.01 in one probability adds ~100 at this sample size.
  constexpr int kDraws = 100000;
  const std::vector<float> logits = hand_logits();
  for (const FilterCase& c : filter_cases()) {
    SCOPED_TRACE(c.name);
    Sampler sampler(case_params(c, 777), 8);
    std::vector<int> counts(8, 0);
    for (int i = 0; i < kDraws; ++i) ++counts[static_cast<size_t>(sampler.sample(logits))];
    double chi2 = 0.0;
    for (int32_t token = 0; token < 8; ++token) {
      const auto it = c.expected.find(token);
      if (it == c.expected.end()) {
        EXPECT_EQ(counts[static_cast<size_t>(token)], 0) << "filtered token " << token << " drawn";
        continue;
      }
      const double e = it->second * kDraws;
      const double d = counts[static_cast<size_t>(token)] - e;
      chi2 += d * d / e;
    }
    EXPECT_LT(chi2, 45.0);
  }
}

TEST(Sampler, PenaltiesChangeTheRightLogitsByHandComputedAmounts) {
  SamplingParams p = plain_params();
  p.repeat_penalty = 2.0f;
  p.frequency_penalty = 0.1f;
  p.presence_penalty = 0.5f;
  p.repeat_last_n = 64;
  Sampler sampler(p, 6);
  for (int32_t t : {0, 1, 0, 4, 5}) sampler.accept(t);
  std::vector<float> logits = {2.0f, -1.0f, 0.5f, 3.0f, -2.0f, 0.0f};
  const std::vector<float> original = logits;
  sampler.apply_penalties(logits);
  EXPECT_FLOAT_EQ(logits[0], 2.0f / 2 - 2 * 0.1f - 0.5f);   // positive: divided; count 2
  EXPECT_FLOAT_EQ(logits[1], -1.0f * 2 - 0.1f - 0.5f);      // negative: multiplied
  EXPECT_FLOAT_EQ(logits[2], 0.5f);                         // never seen
  EXPECT_FLOAT_EQ(logits[3], 3.0f);
  EXPECT_FLOAT_EQ(logits[4], -2.0f * 2 - 0.1f - 0.5f);
  EXPECT_FLOAT_EQ(logits[5], 0.0f * 2 - 0.1f - 0.5f);       // zero counts as non-positive

  EXPECT_NE(logits, original);

  // sample() applies the same penalties without touching the caller's logits. Unpenalised,
  // token 3 (2.2) wins; penalised, 3 -> 2.2 / 2 - 0.6 = 0.5 and 0 -> 0.4, so token 2 (0.9) wins.
  SamplingParams g = p;
  g.temperature = 0.0f;
  Sampler greedy(g, 6);
  std::vector<float> probe = {2.0f, -1.0f, 0.9f, 2.2f, -2.0f, 0.0f};
  const std::vector<float> probe_copy = probe;
  EXPECT_EQ(greedy.sample(probe), 3);
  for (int32_t t : {0, 3}) greedy.accept(t);
  EXPECT_EQ(greedy.sample(probe), 2);
  EXPECT_EQ(probe, probe_copy);
}

TEST(Sampler, PenaltyWindowForgetsOldTokens) {
  SamplingParams p = plain_params();
  p.repeat_penalty = 2.0f;
  p.repeat_last_n = 2;
  Sampler sampler(p, 4);
  for (int32_t t : {0, 1, 2}) sampler.accept(t);  // 0 has left the 2-token window
  std::vector<float> logits = {1.0f, 1.0f, 1.0f, 1.0f};
  sampler.apply_penalties(logits);
  EXPECT_EQ(logits, (std::vector<float>{1.0f, 0.5f, 0.5f, 1.0f}));
  sampler.accept(2);  // window {2, 2}: 2 counted twice, 1 gone
  logits = {1.0f, 1.0f, 1.0f, 1.0f};
  sampler.apply_penalties(logits);
  EXPECT_EQ(logits, (std::vector<float>{1.0f, 1.0f, 0.5f, 1.0f}));
  sampler.reset();
  logits = {1.0f, 1.0f, 1.0f, 1.0f};
  sampler.apply_penalties(logits);
  EXPECT_EQ(logits, (std::vector<float>{1.0f, 1.0f, 1.0f, 1.0f}));

  // Frequency counts inside the window only; -1 = everything accepted; 0 = off.
  p.repeat_penalty = 1.0f;
  p.frequency_penalty = 1.0f;
  p.repeat_last_n = 3;
  Sampler freq(p, 4);
  for (int32_t t : {3, 3, 3, 3, 3, 1}) freq.accept(t);
  logits = {0.0f, 0.0f, 0.0f, 0.0f};
  freq.apply_penalties(logits);
  EXPECT_EQ(logits, (std::vector<float>{0.0f, -1.0f, 0.0f, -2.0f}));
  p.repeat_last_n = -1;
  Sampler all(p, 4);
  for (int32_t t : {3, 3, 3, 3, 3, 1}) all.accept(t);
  logits = {0.0f, 0.0f, 0.0f, 0.0f};
  all.apply_penalties(logits);
  EXPECT_EQ(logits, (std::vector<float>{0.0f, -1.0f, 0.0f, -5.0f}));
  p.repeat_last_n = 0;
  Sampler off(p, 4);
  for (int32_t t : {3, 3, 1}) off.accept(t);
  logits = {0.0f, 0.0f, 0.0f, 0.0f};
  off.apply_penalties(logits);
  EXPECT_EQ(logits, (std::vector<float>{0.0f, 0.0f, 0.0f, 0.0f}));
}

TEST(Sampler, PenaltiesFeedTheDistribution) {
  // Presence penalty ln 2 on token 3 halves its weight: .30 -> .15 / (1 - .15) normalisation.
  SamplingParams p = plain_params();
  p.presence_penalty = static_cast<float>(std::log(2.0));
  Sampler sampler(p, 8);
  sampler.accept(3);
  const auto dist = sampler.distribution(hand_logits());
  ASSERT_EQ(dist.size(), 8u);
  for (const TokenProb& t : dist) {
    const double expected = (t.id == 3 ? 0.15 : kProb[t.id]) / 0.85;
    EXPECT_NEAR(t.p, expected, 2e-6) << t.id;
  }
}

TEST(Sampler, MaskedTokensAreNeverDrawn) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> logits = {-inf, 0.0f, -inf, 0.0f, std::numeric_limits<float>::quiet_NaN()};
  Sampler sampler(plain_params(5), 5);
  int counts[5] = {};
  for (int i = 0; i < 2000; ++i) ++counts[sampler.sample(logits)];
  EXPECT_EQ(counts[0] + counts[2] + counts[4], 0);
  EXPECT_GT(counts[1], 800);
  EXPECT_GT(counts[3], 800);
  // Everything masked: no distribution, fall back to the lowest id instead of reading garbage.
  EXPECT_EQ(sampler.sample(std::vector<float>(5, -inf)), 0);
}

TEST(TopLogprobs, EqualsHandComputedLogSoftmax) {
  // logits {1, 2, 3, 0}: ln(e + e^2 + e^3 + 1) = ln(31.19287485) = 3.44018970
  const auto top = top_logprobs(std::vector<float>{1.0f, 2.0f, 3.0f, 0.0f}, 3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].first, 2);
  EXPECT_NEAR(top[0].second, 3.0 - 3.44018970, 1e-6);
  EXPECT_EQ(top[1].first, 1);
  EXPECT_NEAR(top[1].second, 2.0 - 3.44018970, 1e-6);
  EXPECT_EQ(top[2].first, 0);
  EXPECT_NEAR(top[2].second, 1.0 - 3.44018970, 1e-6);
}

TEST(TopLogprobs, TiesClampingAndRawDistribution) {
  // Four equal logits: each ln(1/4), ordered by id; k beyond the vocabulary is clamped.
  const auto all = top_logprobs(std::vector<float>{5.0f, 5.0f, 5.0f, 5.0f}, 10);
  ASSERT_EQ(all.size(), 4u);
  for (int32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(all[static_cast<size_t>(i)].first, i);
    EXPECT_NEAR(all[static_cast<size_t>(i)].second, std::log(0.25), 1e-6);
  }
  EXPECT_TRUE(top_logprobs(std::vector<float>{1.0f}, 0).empty());
  // The hand vocabulary is ln(p) + 1.5: log-softmax gives back ln(p).
  const auto hand = top_logprobs(hand_logits(), 2);
  ASSERT_EQ(hand.size(), 2u);
  EXPECT_EQ(hand[0].first, 3);
  EXPECT_NEAR(hand[0].second, std::log(0.30), 1e-6);
  EXPECT_EQ(hand[1].first, 1);
  EXPECT_NEAR(hand[1].second, std::log(0.20), 1e-6);
}

// A plain full-sort implementation of llama.cpp's chain, to compare with on a large vocabulary
// where the sampler takes its partial-sort shortcuts.
std::map<int32_t, double> reference_distribution(const std::vector<float>& logits, const SamplingParams& p) {
  std::vector<std::pair<int32_t, double>> c;
  for (size_t i = 0; i < logits.size(); ++i) c.emplace_back(static_cast<int32_t>(i), logits[i]);
  std::sort(c.begin(), c.end(), [](const auto& a, const auto& b) {
    return a.second > b.second || (a.second == b.second && a.first < b.first);
  });
  if (p.top_k > 0 && static_cast<size_t>(p.top_k) < c.size()) c.resize(static_cast<size_t>(p.top_k));
  const double max = c[0].second;
  if (p.top_p < 1.0f) {
    double total = 0.0;
    for (const auto& t : c) total += std::exp(t.second - max);
    double cum = 0.0;
    size_t keep = c.size();
    for (size_t i = 0; i < c.size(); ++i) {
      cum += std::exp(c[i].second - max) / total;
      if (cum >= p.top_p) {
        keep = i + 1;
        break;
      }
    }
    c.resize(keep);
  }
  if (p.min_p > 0.0f) {
    double total = 0.0;
    for (const auto& t : c) total += std::exp(t.second - max);
    const double p_max = 1.0 / total;
    size_t keep = 0;
    while (keep < c.size() && std::exp(c[keep].second - max) / total >= p.min_p * p_max) ++keep;
    c.resize(keep);
  }
  double total = 0.0;
  for (const auto& t : c) total += std::exp((t.second - max) / p.temperature);
  std::map<int32_t, double> out;
  for (const auto& t : c) out[t.first] = std::exp((t.second - max) / p.temperature) / total;
  return out;
}

TEST(Sampler, LargeVocabularyMatchesFullSortReference) {
  constexpr int32_t kVocab = 50000;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 2.5f);
  std::vector<float> logits(kVocab);
  for (float& x : logits) x = normal(rng);
  logits[123] = 14.0f;  // a confident head, as real models have
  logits[4567] = 13.0f;

  struct Setting {
    float temperature;
    int32_t top_k;
    float top_p;
    float min_p;
  };
  const Setting settings[] = {
      {0.8f, 40, 0.95f, 0.05f},   // llama.cpp defaults (heap top-k)
      {1.0f, 0, 0.9f, 0.0f},      // top-p alone over the full vocabulary (growing prefix)
      {1.0f, 0, 0.995f, 0.0f},    // nucleus of thousands of tokens
      {0.7f, 0, 0.95f, 0.001f},   // min-p trims before the ranking
      {1.3f, 20000, 0.99f, 0.0f}, // nth_element top-k
      {1.0f, 0, 1.0f, 0.0005f},   // min-p alone (no sort at all)
  };
  for (const Setting& s : settings) {
    SCOPED_TRACE(testing::Message() << "T=" << s.temperature << " top_k=" << s.top_k
                                    << " top_p=" << s.top_p << " min_p=" << s.min_p);
    SamplingParams p = plain_params();
    p.temperature = s.temperature;
    p.top_k = s.top_k;
    p.top_p = s.top_p;
    p.min_p = s.min_p;
    Sampler sampler(p, kVocab);
    const auto dist = sampler.distribution(logits);
    const auto expected = reference_distribution(logits, p);
    ASSERT_EQ(dist.size(), expected.size());
    double max_err = 0.0;
    for (const TokenProb& t : dist) {
      ASSERT_TRUE(expected.count(t.id)) << t.id;
      max_err = std::max(max_err, std::abs(t.p - expected.at(t.id)));
    }
    EXPECT_LT(max_err, 1e-6);
  }
}

TEST(Sampler, SampleIsAllocationFreeAfterConstruction) {
  constexpr int32_t kVocab = 32000;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> logits(kVocab);
  for (float& x : logits) x = normal(rng);
  const SamplingParams defaults;
  SamplingParams full = plain_params();
  full.top_p = 0.9f;
  full.min_p = 0.01f;
  full.repeat_penalty = 1.1f;
  full.frequency_penalty = 0.2f;
  full.repeat_last_n = 16;
  SamplingParams greedy = full;
  greedy.temperature = 0.0f;
  for (SamplingParams p : {defaults, full, greedy}) {
    p.seed = 9;
    Sampler sampler(p, kVocab);
    alloc_counter::start();
    for (int i = 0; i < 50; ++i) {
      const int32_t token = sampler.sample(logits);
      sampler.accept(token);
    }
    sampler.reset();
    const long allocations = alloc_counter::stop();
    EXPECT_EQ(allocations, 0) << "temperature " << p.temperature;
  }
}

TEST(Sampler, LargeVocabularyIsCheaperThanAFullSort) {
  // Not a benchmark, a guard against accidental full sorts on a 152k vocabulary (Qwen2),
  // relative to one std::sort of the vocabulary on the same machine and build.
  constexpr int32_t kVocab = 152064;
  constexpr int kRounds = 30;
  std::mt19937 rng(8);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> logits(kVocab);
  for (float& x : logits) x = normal(rng);
  using Clock = std::chrono::steady_clock;
  const auto per_round_us = [](Clock::time_point start) {
    return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / kRounds;
  };

  std::vector<TokenLogit> all(kVocab);
  auto start = Clock::now();
  for (int r = 0; r < kRounds; ++r) {
    for (int32_t i = 0; i < kVocab; ++i) all[static_cast<size_t>(i)] = {i, logits[static_cast<size_t>(i)]};
    std::sort(all.begin(), all.end(), ranks_before);
  }
  const double sort_us = per_round_us(start);

  SamplingParams no_top_k;
  no_top_k.top_k = 0;
  SamplingParams greedy;
  greedy.temperature = 0.0f;
  struct Case {
    const char* name;
    SamplingParams params;
    double max_fraction_of_sort;
  };
  for (Case c : {Case{"defaults", SamplingParams{}, 0.25}, Case{"top_k 0", no_top_k, 0.5},
                 Case{"greedy", greedy, 0.25}}) {
    c.params.seed = 1;
    Sampler sampler(c.params, kVocab);
    int64_t sink = 0;
    start = Clock::now();
    for (int r = 0; r < kRounds; ++r) sink += sampler.sample(logits);
    const double us = per_round_us(start);
    std::printf("[ info ] vocab %d, %s: %.1f us/sample; full sort %.1f us (sink %lld)\n", kVocab,
                c.name, us, sort_us, static_cast<long long>(sink));
    EXPECT_LT(us, c.max_fraction_of_sort * sort_us) << c.name;
  }
}

}  // namespace
}  // namespace inferscope
