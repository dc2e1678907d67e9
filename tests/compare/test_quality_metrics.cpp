// The comparison's quality figures against an independent long-double computation on fixed logit
// sets: KL(p || q) from probabilities (not log-softmax), top-1 by a sort, the NLL of the target.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "engine/compare/quality_metrics.h"

namespace inferscope {
namespace {

// Probabilities by the plain formula exp(x_i) / sum exp(x_j) in long double.
std::vector<long double> probabilities(const std::vector<float>& logits) {
  std::vector<long double> p(logits.size());
  long double sum = 0;
  for (size_t i = 0; i < logits.size(); ++i) sum += p[i] = std::exp(static_cast<long double>(logits[i]));
  for (long double& v : p) v /= sum;
  return p;
}

long double reference_kl(const std::vector<float>& a, const std::vector<float>& b) {
  const auto p = probabilities(a);
  const auto q = probabilities(b);
  long double kl = 0;
  for (size_t i = 0; i < p.size(); ++i) kl += p[i] * std::log(p[i] / q[i]);
  return kl;
}

size_t reference_top1(const std::vector<float>& x) {
  std::vector<size_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t i, size_t j) { return x[i] > x[j]; });
  return order.front();
}

// Two fixed logit sets of 4 positions x 11 tokens (small enough for exp() without overflow).
const std::vector<std::vector<float>> kBase = {
    {1.5f, -0.25f, 3.0f, 0.0f, 2.25f, -1.0f, 0.5f, 1.0f, -2.0f, 0.75f, 2.9f},
    {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f},
    {-3.0f, 4.0f, 1.0f, 0.5f, 3.75f, -0.5f, 2.0f, 0.25f, 1.25f, -1.5f, 0.0f},
    {2.0f, 2.0f, 1.0f, -1.0f, 0.0f, 1.5f, -2.5f, 0.5f, 1.75f, 0.125f, -0.75f}};
const std::vector<std::vector<float>> kCand = {
    {1.25f, 0.0f, 2.5f, 0.5f, 2.75f, -1.5f, 0.25f, 1.5f, -1.0f, 0.5f, 2.0f},
    {0.5f, -0.5f, 0.25f, 0.0f, 1.0f, -1.0f, 0.0f, 0.75f, 0.0f, -0.25f, 0.0f},
    {-2.5f, 3.5f, 1.5f, 0.0f, 4.25f, -0.25f, 1.5f, 0.5f, 1.0f, -1.0f, 0.5f},
    {2.0f, 1.75f, 1.25f, -0.5f, 0.25f, 1.0f, -2.0f, 0.0f, 1.5f, 0.5f, -1.0f}};
const int32_t kTargets[] = {2, 7, 4, 0};

TEST(QualityMetrics, KlTopOneAndNllMatchALongDoubleReference) {
  for (size_t t = 0; t < kBase.size(); ++t) {
    const PositionQuality q = compare_position(kBase[t].data(), kCand[t].data(), 11, kTargets[t]);
    EXPECT_NEAR(q.kl, static_cast<double>(reference_kl(kBase[t], kCand[t])), 1e-12) << "position " << t;
    EXPECT_EQ(q.top1_agrees, reference_top1(kBase[t]) == reference_top1(kCand[t])) << "position " << t;
    const auto p = probabilities(kCand[t]);
    EXPECT_NEAR(q.nll, static_cast<double>(-std::log(p[static_cast<size_t>(kTargets[t])])), 1e-12);
  }
}

TEST(QualityMetrics, TiesGoToTheLowestIdAsInGreedySampling) {
  // Position 3 of the base ties ids 0 and 1; the candidate prefers 0: they agree.
  EXPECT_TRUE(compare_position(kBase[3].data(), kCand[3].data(), 11, 0).top1_agrees);
  // Position 0: base picks id 2 (3.0), the candidate id 4 (2.75): they disagree.
  EXPECT_FALSE(compare_position(kBase[0].data(), kCand[0].data(), 11, 0).top1_agrees);
}

TEST(QualityMetrics, IdenticalLogitsGiveExactlyZero) {
  for (const auto& x : kBase) {
    const PositionQuality q = compare_position(x.data(), x.data(), 11, 1);
    EXPECT_EQ(q.kl, 0.0);
    EXPECT_TRUE(q.top1_agrees);
  }
}

TEST(QualityMetrics, AccumulatorAveragesAndFindsTheWorstPosition) {
  QualityAccumulator acc;
  long double kl_sum = 0, nll_sum = 0;
  int agree = 0;
  size_t worst = 0;
  std::vector<long double> kls;
  for (size_t t = 0; t < kBase.size(); ++t) {
    const PositionQuality q = compare_position(kBase[t].data(), kCand[t].data(), 11, kTargets[t]);
    acc.add(q, 0, static_cast<int64_t>(t), kTargets[t], true);
    kls.push_back(reference_kl(kBase[t], kCand[t]));
    kl_sum += kls.back();
    nll_sum += -std::log(probabilities(kCand[t])[static_cast<size_t>(kTargets[t])]);
    agree += reference_top1(kBase[t]) == reference_top1(kCand[t]) ? 1 : 0;
    if (kls.back() > kls[worst]) worst = t;
  }
  const QualityFigures f = acc.figures();
  EXPECT_EQ(f.positions, 4);
  EXPECT_NEAR(f.mean_kl, static_cast<double>(kl_sum / 4), 1e-12);
  EXPECT_DOUBLE_EQ(f.top1_agreement, agree / 4.0);
  EXPECT_NEAR(f.max_kl, static_cast<double>(kls[worst]), 1e-12);
  EXPECT_EQ(f.worst.position, static_cast<int64_t>(worst));
  EXPECT_EQ(f.worst.target, kTargets[worst]);
  EXPECT_NEAR(f.perplexity, static_cast<double>(std::exp(nll_sum / 4)), 1e-9);
  ASSERT_EQ(f.kl_per_position.size(), 4u);
  EXPECT_FLOAT_EQ(f.kl_per_position[2], static_cast<float>(kls[2]));
}

TEST(QualityMetrics, PositionsWithoutATargetStayOutOfThePerplexity) {
  QualityAccumulator acc;
  acc.add(compare_position(kBase[0].data(), kCand[0].data(), 11, kTargets[0]), 0, 0, kTargets[0], true);
  acc.add(compare_position(kBase[1].data(), kCand[1].data(), 11, -1), 0, 1, -1, false);
  const QualityFigures f = acc.figures();
  EXPECT_EQ(f.positions, 2);
  EXPECT_EQ(f.perplexity_positions, 1);
  EXPECT_NEAR(f.perplexity, static_cast<double>(1 / probabilities(kCand[0])[2]), 1e-9);
}

}  // namespace
}  // namespace inferscope
