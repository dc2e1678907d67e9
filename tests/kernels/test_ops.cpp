// Forward-pass ops (norm, RoPE, SwiGLU, softmax, attention): SIMD variants against the scalar
// code, and both against plain double-precision formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/formats/fp16.h"
#include "kernels/cpu/ops.h"

namespace inferscope::kernels {
namespace detail {
void swiglu_avx2(float* gate, const float* up, int64_t n);
void softmax_avx2(float* x, int64_t n);
}
namespace {

std::vector<float> random_vector(int64_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

bool has_avx2() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c"); }

TEST(Ops, RmsNormMatchesFormula) {
  const auto x = random_vector(67, 1), w = random_vector(67, 2);
  std::vector<float> y(67);
  rms_norm(x.data(), w.data(), y.data(), 67, 1e-5f);
  double ss = 0;
  for (float v : x) ss += double(v) * v;
  const double scale = 1.0 / std::sqrt(ss / 67 + 1e-5);
  for (int i = 0; i < 67; ++i) EXPECT_NEAR(y[i], x[i] * scale * w[i], 1e-5) << i;
}

TEST(Ops, SwigluSimdMatchesFormulaOverWideRange) {
  if (!has_avx2()) GTEST_SKIP() << "no AVX2";
  for (int64_t n : {1, 7, 8, 9, 33, 1000}) {
    auto gate = random_vector(n, 3, 8.0f);
    gate[0] = -100.0f;  // exp overflow region
    if (n > 1) gate[1] = 100.0f;
    const auto up = random_vector(n, 4);
    auto simd = gate;
    detail::swiglu_avx2(simd.data(), up.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const double g = gate[static_cast<size_t>(i)];
      const double expected = g / (1.0 + std::exp(-g)) * up[static_cast<size_t>(i)];
      EXPECT_NEAR(simd[static_cast<size_t>(i)], expected, 1e-6 * std::max(1.0, std::fabs(expected))) << i;
    }
  }
}

TEST(Ops, SoftmaxSumsToOneAndIsShiftInvariant) {
  auto x = random_vector(100, 5, 10.0f);
  auto shifted = x;
  for (float& v : shifted) v += 64.0f;  // exactly representable shift: same probabilities
  softmax(x.data(), 100);
  softmax(shifted.data(), 100);
  double sum = 0;
  for (int i = 0; i < 100; ++i) {
    sum += x[i];
    EXPECT_NEAR(x[i], shifted[i], 1e-6);
  }
  EXPECT_NEAR(sum, 1.0, 1e-5);
}

TEST(Ops, SoftmaxSimdMatchesFormula) {
  if (!has_avx2()) GTEST_SKIP() << "no AVX2";
  for (int64_t n : {1, 5, 8, 13, 300}) {
    auto x = random_vector(n, 11, 6.0f);
    auto simd = x;
    detail::softmax_avx2(simd.data(), n);
    double max = -1e300, sum = 0;
    for (float v : x) max = std::max<double>(max, v);
    for (float v : x) sum += std::exp(v - max);
    for (int64_t i = 0; i < n; ++i) {
      const double expected = std::exp(x[static_cast<size_t>(i)] - max) / sum;
      EXPECT_NEAR(simd[static_cast<size_t>(i)], expected, 1e-6 * std::max(1.0, expected * 10)) << i;
    }
  }
}

TEST(Ops, RopeRotatesPairsByPositionAngle) {
  const int64_t hd = 8, n_rot = 8;
  std::vector<float> c(n_rot / 2), s(n_rot / 2);
  rope_angles(3, n_rot, 10000.0f, 1.0f, c.data(), s.data());
  for (int64_t i = 0; i < n_rot / 2; ++i) {
    const double theta = 3.0 * std::pow(10000.0, -2.0 * i / n_rot);
    EXPECT_NEAR(c[i], std::cos(theta), 1e-5);
    EXPECT_NEAR(s[i], std::sin(theta), 1e-5);
  }
  for (bool neox : {false, true}) {
    auto x = random_vector(hd, 6);
    auto y = x;
    rope_apply(y.data(), 1, hd, n_rot, c.data(), s.data(), neox);
    for (int64_t i = 0; i < n_rot / 2; ++i) {
      const int64_t a = neox ? i : 2 * i, b = neox ? i + n_rot / 2 : 2 * i + 1;
      EXPECT_NEAR(y[a], x[a] * c[i] - x[b] * s[i], 1e-6);
      EXPECT_NEAR(y[b], x[a] * s[i] + x[b] * c[i], 1e-6);
    }
  }
}

// Plain double-precision attention over F16 K/V, with q and weights rounded to F16 as the
// kernel contract says.
std::vector<double> reference_attention(const std::vector<float>& q, const std::vector<uint16_t>& k,
                                        const std::vector<uint16_t>& v, int64_t stride, int64_t n_kv, int64_t hd,
                                        float scale) {
  std::vector<double> w(static_cast<size_t>(n_kv));
  double max = -1e300;
  for (int64_t p = 0; p < n_kv; ++p) {
    double dot = 0;
    for (int64_t d = 0; d < hd; ++d) dot += double(round_to_fp16(q[d])) * fp16_to_fp32(k[p * stride + d]);
    w[p] = dot * scale;
    max = std::max(max, w[p]);
  }
  double sum = 0;
  for (double& x : w) sum += (x = std::exp(x - max));
  std::vector<double> out(static_cast<size_t>(hd), 0.0);
  for (int64_t p = 0; p < n_kv; ++p) {
    const double weight = round_to_fp16(static_cast<float>(w[p] / sum));
    for (int64_t d = 0; d < hd; ++d) out[d] += weight * fp16_to_fp32(v[p * stride + d]);
  }
  return out;
}

TEST(Ops, AttentionScalarAndSimdMatchReference) {
  for (int64_t hd : {8, 64, 128}) {
    for (int64_t n_kv : {1, 2, 17, 300}) {
      const int64_t stride = hd * 3;  // rows hold three KV heads; we read the first
      const auto q = random_vector(hd, 7);
      const auto kf = random_vector(n_kv * stride, 8), vf = random_vector(n_kv * stride, 9);
      std::vector<uint16_t> k(kf.size()), v(vf.size());
      to_fp16(kf.data(), k.data(), static_cast<int64_t>(kf.size()));
      to_fp16(vf.data(), v.data(), static_cast<int64_t>(vf.size()));
      const float scale = 1.0f / std::sqrt(float(hd));
      const auto expected = reference_attention(q, k, v, stride, n_kv, hd, scale);
      std::vector<float> scores(static_cast<size_t>(n_kv)), out(static_cast<size_t>(hd));
      detail::attention_head_f16_scalar(q.data(), k.data(), v.data(), stride, n_kv, hd, scale, scores.data(), out.data());
      for (int64_t d = 0; d < hd; ++d) EXPECT_NEAR(out[d], expected[d], 2e-5) << "scalar hd " << hd << " n_kv " << n_kv;
      // attention_group's fused path (AVX2 where the CPU has it) on the same F16 rows.
      std::vector<float> scratch(static_cast<size_t>(attention_scratch_floats(n_kv, hd)));
      const KvRows kr{KvType::F16, reinterpret_cast<const uint8_t*>(k.data()), 2 * stride, 0};
      const KvRows vr{KvType::F16, reinterpret_cast<const uint8_t*>(v.data()), 2 * stride, 0};
      attention_group(q.data(), hd, 1, kr, vr, n_kv, hd, scale, 0.0f, scratch.data(), out.data(), hd);
      for (int64_t d = 0; d < hd; ++d) EXPECT_NEAR(out[d], expected[d], 2e-5) << "fused hd " << hd << " n_kv " << n_kv;
    }
  }
}

}  // namespace
}  // namespace inferscope::kernels
