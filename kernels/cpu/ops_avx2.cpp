// AVX2 + FMA versions of the activation functions (prefill spends ~10% in SwiGLU otherwise)
// and of Gemma 2's soft-capping (one tanh per attention score).
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/cpu/ops.h"

namespace inferscope::kernels::detail {

namespace {

// exp(x) for x in [-87, 88]: 2^k * p(r) with r = x - k*ln2 in [-ln2/2, ln2/2] and a degree-6
// polynomial (relative error ~2e-7). Inputs outside the range are clamped.
inline __m256 exp_avx2(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.0f)), _mm256_set1_ps(88.0f));
  const __m256 k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693145751953125f), x);
  r = _mm256_fnmadd_ps(k, _mm256_set1_ps(1.428606765330187e-06f), r);
  __m256 p = _mm256_set1_ps(1.0f / 720);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}

}  // namespace

void swiglu_avx2(float* gate, const float* up, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    const __m256 silu = _mm256_div_ps(g, _mm256_add_ps(one, exp_avx2(_mm256_sub_ps(_mm256_setzero_ps(), g))));
    _mm256_storeu_ps(gate + i, _mm256_mul_ps(silu, _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

// gelu(g) = 0.5 g (1 + tanh(u)) = g * sigmoid(2u), u = sqrt(2/pi) (g + 0.044715 g^3): one exp.
void geglu_avx2(float* gate, const float* up, int64_t n) {
  constexpr float kSqrt2OverPi = 0.79788456080286535588f;
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 minus_two_k = _mm256_set1_ps(-2.0f * kSqrt2OverPi);
  const __m256 cubic = _mm256_set1_ps(0.044715f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    const __m256 inner = _mm256_mul_ps(g, _mm256_fmadd_ps(_mm256_mul_ps(cubic, g), g, one));
    const __m256 e = exp_avx2(_mm256_mul_ps(minus_two_k, inner));
    const __m256 gelu = _mm256_div_ps(g, _mm256_add_ps(one, e));
    _mm256_storeu_ps(gate + i, _mm256_mul_ps(gelu, _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) {
    const float g = gate[i];
    gate[i] = 0.5f * g * (1.0f + std::tanh(kSqrt2OverPi * g * (1.0f + 0.044715f * g * g))) * up[i];
  }
}

// cap * tanh(x / cap) with tanh(y) = sign(y) (1 - e) / (1 + e), e = exp(-2|y|) <= 1: no
// overflow, absolute error ~1e-7 * cap.
void softcap_avx2(float* x, int64_t n, float cap) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 sign_bit = _mm256_set1_ps(-0.0f);
  const __m256 minus_two_over_cap = _mm256_set1_ps(-2.0f / cap);
  const __m256 vcap = _mm256_set1_ps(cap);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 magnitude = _mm256_andnot_ps(sign_bit, v);
    const __m256 e = exp_avx2(_mm256_mul_ps(minus_two_over_cap, magnitude));
    const __m256 t = _mm256_div_ps(_mm256_sub_ps(one, e), _mm256_add_ps(one, e));
    const __m256 signed_t = _mm256_or_ps(t, _mm256_and_ps(sign_bit, v));
    _mm256_storeu_ps(x + i, _mm256_mul_ps(vcap, signed_t));
  }
  for (; i < n; ++i) x[i] = cap * std::tanh(x[i] / cap);
}

void softmax_avx2(float* x, int64_t n) {
  __m256 vmax = _mm256_set1_ps(-INFINITY);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(x + i));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, vmax);
  float max = lanes[0];
  for (int j = 1; j < 8; ++j) max = std::max(max, lanes[j]);
  for (int64_t j = i; j < n; ++j) max = std::max(max, x[j]);
  const __m256 shift = _mm256_set1_ps(max);
  __m256 vsum = _mm256_setzero_ps();
  for (i = 0; i + 8 <= n; i += 8) {
    const __m256 e = exp_avx2(_mm256_sub_ps(_mm256_loadu_ps(x + i), shift));
    _mm256_storeu_ps(x + i, e);
    vsum = _mm256_add_ps(vsum, e);
  }
  _mm256_store_ps(lanes, vsum);
  double sum = 0.0;
  for (float l : lanes) sum += l;
  for (; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  const __m256 inv = _mm256_set1_ps(static_cast<float>(1.0 / sum));
  for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), inv));
  for (; i < n; ++i) x[i] *= static_cast<float>(1.0 / sum);
}

}  // namespace inferscope::kernels::detail
