// Plain loops the compiler vectorizes; none of these is on the bandwidth-critical path.
#include "kernels/cpu/ops.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/cpu/cpu_features.h"
#include "kernels/formats/fp16.h"

namespace inferscope::kernels {

void rms_norm(const float* x, const float* w, float* y, int64_t n, float eps) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  const float scale = 1.0f / std::sqrt(static_cast<float>(sum / static_cast<double>(n)) + eps);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * scale * w[i];
}

void layer_norm(const float* x, const float* w, const float* b, float* y, int64_t n, float eps) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  const auto mean = static_cast<float>(sum / static_cast<double>(n));
  double squares = 0.0;
  for (int64_t i = 0; i < n; ++i) squares += static_cast<double>(x[i] - mean) * (x[i] - mean);
  const float scale = 1.0f / std::sqrt(static_cast<float>(squares / static_cast<double>(n)) + eps);
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * scale * w[i] + b[i];
}

void rope_angles(int64_t pos, int64_t n_rot, const RopeParams& p, float* cos_out, float* sin_out) {
  // theta advances by a running product, as ggml does, so unscaled files keep their rounding.
  const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(n_rot));
  const bool yarn = p.yarn_ext_factor != 0.0f;
  const float ramp_width = std::max(0.001f, p.yarn_corr_high - p.yarn_corr_low);
  float theta_base = static_cast<float>(pos);
  for (int64_t i = 0; i < n_rot / 2; ++i) {
    const float theta_extrap = p.freq_factors ? theta_base / p.freq_factors[i] : theta_base;
    float theta = p.freq_scale * theta_extrap;
    if (yarn) {
      const float y = (static_cast<float>(i) - p.yarn_corr_low) / ramp_width;
      const float mix = (1.0f - std::min(1.0f, std::max(0.0f, y))) * p.yarn_ext_factor;
      theta = theta * (1.0f - mix) + theta_extrap * mix;
    }
    cos_out[i] = std::cos(theta) * p.attn_factor;
    sin_out[i] = std::sin(theta) * p.attn_factor;
    theta_base *= theta_scale;
  }
}

void rope_angles(int64_t pos, int64_t n_rot, float freq_base, float freq_scale, float* cos_out, float* sin_out) {
  RopeParams p;
  p.freq_base = freq_base;
  p.freq_scale = freq_scale;
  rope_angles(pos, n_rot, p, cos_out, sin_out);
}

void rope_yarn_corr_dims(int64_t n_rot, int64_t n_ctx_orig, float freq_base, float beta_fast, float beta_slow,
                         float* low, float* high) {
  // The pair index whose wavelength fits n_turns times into the original context.
  auto corr_dim = [&](float n_turns) {
    return static_cast<float>(n_rot) * std::log(static_cast<float>(n_ctx_orig) / (n_turns * 2.0f * 3.14159265358979f)) /
           (2.0f * std::log(freq_base));
  };
  *low = std::max(0.0f, std::floor(corr_dim(beta_fast)));
  *high = std::min(static_cast<float>(n_rot - 1), std::ceil(corr_dim(beta_slow)));
}

void rope_apply(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cos_v, const float* sin_v,
                bool neox) {
  const int64_t half = n_rot / 2;
  for (int64_t h = 0; h < n_heads; ++h) {
    float* v = x + h * head_dim;
    for (int64_t i = 0; i < half; ++i) {
      const int64_t ia = neox ? i : 2 * i;
      const int64_t ib = neox ? i + half : 2 * i + 1;
      const float a = v[ia], b = v[ib];
      v[ia] = a * cos_v[i] - b * sin_v[i];
      v[ib] = a * sin_v[i] + b * cos_v[i];
    }
  }
}

namespace detail {
void swiglu_avx2(float* gate, const float* up, int64_t n);
void softmax_avx2(float* x, int64_t n);
void geglu_avx2(float* gate, const float* up, int64_t n);
void softcap_avx2(float* x, int64_t n, float cap);
}  // namespace detail

namespace {
// Follows set_simd_level, so tests can compare the scalar loops with the AVX2 ones.
bool use_avx2() { return active_simd_level() >= SimdLevel::Avx2; }

float gelu_tanh(float x) {
  constexpr float kSqrt2OverPi = 0.79788456080286535588f;
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + 0.044715f * x * x)));
}
}  // namespace

void swiglu(float* gate, const float* up, int64_t n) {
  if (use_avx2()) {
    detail::swiglu_avx2(gate, up, n);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    gate[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void geglu(float* gate, const float* up, int64_t n) {
  if (use_avx2()) {
    detail::geglu_avx2(gate, up, n);
    return;
  }
  for (int64_t i = 0; i < n; ++i) gate[i] = gelu_tanh(gate[i]) * up[i];
}

void sigmoid_gate(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) gate[i] = up[i] / (1.0f + std::exp(-gate[i]));
}

void swiglu_oai(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = std::min(gate[i], kSwigluOaiLimit);
    const float u = std::clamp(up[i], -kSwigluOaiLimit, kSwigluOaiLimit);
    gate[i] = g / (1.0f + std::exp(-kSwigluOaiAlpha * g)) * (u + 1.0f);
  }
}

void gelu(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = gelu_tanh(x[i]);
}

void softcap(float* x, int64_t n, float cap) {
  if (use_avx2()) {
    detail::softcap_avx2(x, n, cap);
    return;
  }
  const float inv = 1.0f / cap;
  for (int64_t i = 0; i < n; ++i) x[i] = cap * std::tanh(x[i] * inv);
}

void add_scaled(float* y, const float* x, int64_t n, float scale) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i] * scale;
}

void add(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

void softmax(float* x, int64_t n) {
  if (use_avx2()) {
    detail::softmax_avx2(x, n);
    return;
  }
  softmax_exact(x, n);
}

void softmax_exact(float* x, int64_t n) {
  float max = x[0];
  for (int64_t i = 1; i < n; ++i) max = x[i] > max ? x[i] : max;
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

void softmax_with_sink(float* x, int64_t n, float sink) {
  float max = sink;
  for (int64_t i = 0; i < n; ++i) max = x[i] > max ? x[i] : max;
  double sum = std::exp(static_cast<double>(sink - max));
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

void moe_top_k(float* logits, int64_t n_expert, int64_t k, bool renormalize, int32_t* order, int32_t* ids,
               float* weights) {
  softmax_exact(logits, n_expert);
  std::iota(order, order + n_expert, 0);
  std::partial_sort(order, order + k, order + n_expert, [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  });
  float sum = 0.0f;
  for (int64_t j = 0; j < k; ++j) sum += logits[order[j]];
  for (int64_t j = 0; j < k; ++j) {
    ids[j] = order[j];
    weights[j] = renormalize ? logits[order[j]] / sum : logits[order[j]];
  }
}

void to_fp16(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = fp32_to_fp16(x[i]);
}

}  // namespace inferscope::kernels
