// Gemma's ops: GeGLU (tanh-approximated gelu), soft-capping, and attention with soft-capped
// scores; scalar and AVX2 paths (via set_simd_level) against double-precision formulas.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/formats/fp16.h"
#include "kernels/cpu/ops.h"

namespace inferscope::kernels {
namespace {

std::vector<float> random_vector(int64_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

// Runs `body` once per SIMD level this CPU has (scalar always), restoring the default after.
template <class Body>
void for_each_simd_level(Body body) {
  for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::Avx2}) {
    if (level > detected_simd_level()) continue;
    set_simd_level(level);
    body(simd_level_name(level));
  }
  set_simd_level(detected_simd_level());
}

double gelu_tanh(double x) { return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x))); }

TEST(OpsGemma, GegluMatchesTanhGeluFormula) {
  // 131 values: the AVX2 loop and its scalar tail; scale 4 reaches both saturated ends.
  const auto gate = random_vector(131, 11, 4.0f), up = random_vector(131, 12, 1.0f);
  for_each_simd_level([&](const char* level) {
    std::vector<float> out = gate;
    geglu(out.data(), up.data(), static_cast<int64_t>(out.size()));
    for (size_t i = 0; i < out.size(); ++i) {
      const double expected = gelu_tanh(gate[i]) * up[i];
      EXPECT_NEAR(out[i], expected, 2e-6 * (1.0 + std::fabs(expected))) << level << " x=" << gate[i];
    }
  });
}

TEST(OpsGemma, GeluReachesItsLimitsWithoutOverflow) {
  const std::vector<float> gate = {-200.f, -30.f, -10.f, 0.f, 10.f, 30.f, 200.f, 1e-3f};
  const std::vector<float> up(gate.size(), 1.0f);
  for_each_simd_level([&](const char* level) {
    std::vector<float> out = gate;
    geglu(out.data(), up.data(), static_cast<int64_t>(out.size()));
    for (size_t i = 0; i < out.size(); ++i) {
      EXPECT_TRUE(std::isfinite(out[i])) << level;
      EXPECT_NEAR(out[i], gelu_tanh(gate[i]), 1e-6 * (1.0 + std::fabs(gate[i]))) << level << " x=" << gate[i];
    }
  });
}

TEST(OpsGemma, SoftcapMatchesFormula) {
  for (float cap : {50.0f, 30.0f, 2.5f}) {
    const auto x = random_vector(77, 13, 2.0f * cap);
    for_each_simd_level([&](const char* level) {
      std::vector<float> y = x;
      softcap(y.data(), static_cast<int64_t>(y.size()), cap);
      for (size_t i = 0; i < y.size(); ++i) {
        EXPECT_NEAR(y[i], cap * std::tanh(double(x[i]) / cap), 1e-6 * cap) << level << " cap " << cap;
        EXPECT_LE(std::fabs(y[i]), cap) << level;
      }
    });
  }
}

// Double-precision attention with soft-capped scores; q and the softmax weights are rounded
// to F16 as the kernel contract says.
std::vector<double> reference_capped_attention(const std::vector<float>& q, const std::vector<uint16_t>& k,
                                               const std::vector<uint16_t>& v, int64_t stride, int64_t n_kv,
                                               int64_t hd, double scale, double cap) {
  std::vector<double> w(static_cast<size_t>(n_kv));
  for (int64_t p = 0; p < n_kv; ++p) {
    double dot = 0;
    for (int64_t d = 0; d < hd; ++d) dot += double(round_to_fp16(q[d])) * fp16_to_fp32(k[p * stride + d]);
    w[p] = cap * std::tanh(dot * scale / cap);
  }
  const double max = *std::max_element(w.begin(), w.end());
  double sum = 0;
  for (double& x : w) sum += (x = std::exp(x - max));
  std::vector<double> out(static_cast<size_t>(hd), 0.0);
  for (int64_t p = 0; p < n_kv; ++p) {
    const double weight = round_to_fp16(static_cast<float>(w[p] / sum));
    for (int64_t d = 0; d < hd; ++d) out[d] += weight * fp16_to_fp32(v[p * stride + d]);
  }
  return out;
}

TEST(OpsGemma, AttentionWithSoftcapMatchesReference) {
  for (int64_t hd : {64, 256}) {
    for (int64_t n_kv : {1, 13, 40}) {
      const int64_t stride = 2 * hd;
      // Large q so that the cap of 5 bites: raw scores of tens.
      const auto q = random_vector(hd, 21, 4.0f);
      const auto kf = random_vector(n_kv * stride, 22, 1.0f), vf = random_vector(n_kv * stride, 23, 1.0f);
      std::vector<uint16_t> k(kf.size()), v(vf.size());
      to_fp16(kf.data(), k.data(), static_cast<int64_t>(kf.size()));
      to_fp16(vf.data(), v.data(), static_cast<int64_t>(vf.size()));
      const float scale = 1.0f / std::sqrt(float(hd)), cap = 5.0f;
      const auto expected = reference_capped_attention(q, k, v, stride, n_kv, hd, scale, cap);
      for_each_simd_level([&](const char* level) {
        std::vector<float> scores(static_cast<size_t>(attention_scratch_floats(n_kv, hd))), out(static_cast<size_t>(hd));
        const KvRows kr{KvType::F16, reinterpret_cast<const uint8_t*>(k.data()), 2 * stride, 0};
        const KvRows vr{KvType::F16, reinterpret_cast<const uint8_t*>(v.data()), 2 * stride, 0};
        attention_group(q.data(), hd, 1, kr, vr, n_kv, hd, scale, cap, scores.data(), out.data(), hd);
        for (int64_t d = 0; d < hd; ++d) {
          EXPECT_NEAR(out[d], expected[d], 5e-5) << level << " hd " << hd << " n_kv " << n_kv << " d " << d;
        }
      });
    }
  }
}

}  // namespace
}  // namespace inferscope::kernels
