// select_top_k / argmax_logit against a full sort, on both selection paths (heap for small k,
// nth_element for large k), with ties and special values; the vectorised exp / sum / max
// helpers against std::exp in double.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "engine/sampling/logit_math.h"
#include "engine/sampling/top_k.h"

namespace inferscope {
namespace {

std::vector<TokenLogit> reference_top_k(const std::vector<float>& logits, int32_t k) {
  std::vector<TokenLogit> all;
  for (size_t i = 0; i < logits.size(); ++i) {
    float v = logits[i];
    if (std::isnan(v)) v = -std::numeric_limits<float>::infinity();
    if (v == std::numeric_limits<float>::infinity()) v = std::numeric_limits<float>::max();
    all.push_back({static_cast<int32_t>(i), v});
  }
  std::sort(all.begin(), all.end(), [](const TokenLogit& a, const TokenLogit& b) {
    if (a.logit != b.logit) return a.logit > b.logit;
    return a.id < b.id;
  });
  all.resize(std::min(all.size(), static_cast<size_t>(std::max(k, 0))));
  return all;
}

void expect_same(const std::vector<TokenLogit>& got, const std::vector<TokenLogit>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].id, want[i].id) << "rank " << i;
    EXPECT_EQ(got[i].logit, want[i].logit) << "rank " << i;
  }
}

TEST(TopK, MatchesFullSortOnBothPaths) {
  std::mt19937 rng(7);
  // Rounded values make many ties, which must break towards the lower id.
  std::uniform_int_distribution<int> level(-50, 50);
  std::vector<float> logits(5000);
  for (float& x : logits) x = static_cast<float>(level(rng)) * 0.25f;
  std::vector<TokenLogit> out;
  for (int32_t k : {1, 2, 40, 312, 313, 1000, 4999, 5000, 6000}) {
    SCOPED_TRACE(k);
    select_top_k(logits, k, out);
    expect_same(out, reference_top_k(logits, k));
  }
}

TEST(TopK, NonPositiveKGivesNothing) {
  std::vector<float> logits = {1, 2, 3};
  std::vector<TokenLogit> out = {{0, 0.0f}};
  select_top_k(logits, 0, out);
  EXPECT_TRUE(out.empty());
  select_top_k(logits, -3, out);
  EXPECT_TRUE(out.empty());
}

TEST(TopK, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> logits(100, -inf);
  logits[10] = nan;
  logits[20] = 1.0f;
  logits[30] = inf;
  logits[40] = 1.0f;
  std::vector<TokenLogit> out;
  select_top_k(logits, 4, out);
  expect_same(out, reference_top_k(logits, 4));
  EXPECT_EQ(out[0].id, 30);
  EXPECT_EQ(out[1].id, 20);
  EXPECT_EQ(out[2].id, 40);
  EXPECT_EQ(argmax_logit(logits), 30);
}

TEST(TopK, ArgmaxTiesGoToLowestId) {
  EXPECT_EQ(argmax_logit(std::vector<float>{0.5f, 2.0f, -1.0f, 2.0f}), 1);
  EXPECT_EQ(argmax_logit(std::vector<float>{3.0f, 3.0f}), 0);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(argmax_logit(std::vector<float>{-inf, -inf, -inf}), 0);
}

TEST(TopK, LogSumExp) {
  // ln(e^1 + e^2 + e^3 + e^0) = ln(31.19287485) = 3.4401897
  EXPECT_NEAR(log_sum_exp(std::vector<float>{1, 2, 3, 0}), 3.4401897, 1e-6);
  // Large values must not overflow: 1000 + ln 2.
  EXPECT_NEAR(log_sum_exp(std::vector<float>{1000, 1000}), 1000.6931472, 1e-4);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(log_sum_exp(std::vector<float>{-inf, -inf}), -inf);
}

TEST(LogitMath, ExpNonpositiveMatchesStdExp) {
  double max_rel = 0.0;
  for (float x = -87.0f; x <= 0.0f; x += 0.00037f) {
    const double want = std::exp(static_cast<double>(x));
    max_rel = std::max(max_rel, std::abs(exp_nonpositive(x) - want) / want);
  }
  EXPECT_LT(max_rel, 2e-7);
  EXPECT_EQ(exp_nonpositive(0.0f), 1.0f);
  EXPECT_EQ(exp_nonpositive(-0.0f), 1.0f);
  EXPECT_EQ(exp_nonpositive(5.0f), 1.0f);  // out of contract: clamped to exp(0)
  EXPECT_EQ(exp_nonpositive(std::numeric_limits<float>::infinity()), 1.0f);
  EXPECT_EQ(exp_nonpositive(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(exp_nonpositive(std::numeric_limits<float>::quiet_NaN()), 0.0f);
  EXPECT_EQ(exp_nonpositive(-100.0f), 0.0f);
  EXPECT_GT(exp_nonpositive(-87.0f), 0.0f);
}

TEST(LogitMath, SumExpAndMaxMatchDoubleReference) {
  std::mt19937 rng(21);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (size_t n : {1u, 15u, 64u, 1000u, 152064u}) {
    SCOPED_TRACE(n);
    std::vector<float> logits(n);
    for (float& x : logits) x = normal(rng);
    if (n > 10) {
      logits[3] = -std::numeric_limits<float>::infinity();
      logits[7] = std::numeric_limits<float>::quiet_NaN();
    }
    float max = -std::numeric_limits<float>::infinity();
    for (float x : logits)
      if (x > max) max = x;
    EXPECT_EQ(max_logit(logits), max);
    double want = 0.0;
    for (float x : logits)
      if (!std::isnan(x)) want += std::exp(static_cast<double>(x) - max);
    EXPECT_NEAR(sum_exp(logits, max) / want, 1.0, 1e-6);
    EXPECT_NEAR(log_sum_exp(logits), max + std::log(want), 1e-5);
  }
  EXPECT_EQ(max_logit(std::vector<float>{}), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(max_logit(std::vector<float>{std::numeric_limits<float>::infinity(), 1.0f}),
            std::numeric_limits<float>::max());
}

}  // namespace
}  // namespace inferscope
