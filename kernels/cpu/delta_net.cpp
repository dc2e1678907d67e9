#include "kernels/cpu/delta_net.h"

#include <algorithm>
#include <cmath>

namespace inferscope::kernels {

namespace {

// Eight partial sums, so the loop vectorizes without reassociation.
float dot(const float* a, const float* b, int64_t n) {
  float acc[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
  }
  float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// y += s * x.
void axpy(float* y, const float* x, float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += s * x[i];
}

float silu(float x) { return x / (1.0f + std::exp(-x)); }

// log(1 + e^x), as llama.cpp's softplus: x itself above 20.
float softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

void l2_normalize(float* x, int64_t n, float eps, float scale) {
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += x[i] * x[i];
  const float s = scale / std::max(std::sqrt(sum), eps);
  for (int64_t i = 0; i < n; ++i) x[i] *= s;
}

}  // namespace

void causal_conv_silu(float* x, int64_t n, int64_t channels, const float* kernel, int64_t K, float* state, int64_t c0,
                      int64_t c1) {
  for (int64_t t = 0; t < n; ++t) {
    float* row = x + t * channels;
    for (int64_t c = c0; c < c1; ++c) {
      const float* w = kernel + c * K;
      const float in = row[c];
      float sum = 0;
      for (int64_t j = 0; j + 1 < K; ++j) sum += w[j] * state[j * channels + c];
      sum += w[K - 1] * in;
      for (int64_t j = 0; j + 2 < K; ++j) state[j * channels + c] = state[(j + 1) * channels + c];
      state[(K - 2) * channels + c] = in;
      row[c] = silu(sum);
    }
  }
}

void delta_net_prepare(float* q, float* k, int64_t stride, int64_t n_k_heads, int64_t d, float* alpha, float* beta,
                       int64_t n_v_heads, const float* dt, const float* a, int64_t n, float eps) {
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(d));
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t h = 0; h < n_k_heads; ++h) {
      l2_normalize(q + t * stride + h * d, d, eps, q_scale);
      l2_normalize(k + t * stride + h * d, d, eps, 1.0f);
    }
    for (int64_t h = 0; h < n_v_heads; ++h) {
      float& g = alpha[t * n_v_heads + h];
      g = softplus(g + dt[h]) * a[h];
      float& b = beta[t * n_v_heads + h];
      b = 1.0f / (1.0f + std::exp(-b));
    }
  }
}

void delta_net_steps(const DeltaNetHeadRows& r, int64_t n, int64_t d, float* state) {
  for (int64_t t = 0; t < n; ++t) {
    const float* q = r.q + t * r.stride;
    const float* k = r.k + t * r.stride;
    const float* v = r.v + t * r.stride;
    const float decay = std::exp(r.g[t * r.gb_stride]), beta = r.beta[t * r.gb_stride];
    float* out = r.out + t * r.out_stride;
    for (int64_t j = 0; j < d; ++j) {
      float* s = state + j * d;
      for (int64_t i = 0; i < d; ++i) s[i] *= decay;
      const float u = beta * (v[j] - dot(s, k, d));
      axpy(s, k, u, d);
      out[j] = dot(s, q, d);
    }
  }
}

int64_t delta_net_chunk_scratch(int64_t d) { return 2 * kDeltaNetChunk + kDeltaNetChunk * d; }

// One block of m tokens from state S_0, with G_t the decay summed over the block up to t:
//   u_t = beta_t (v_t - e^{G_t} S_0 k_t) - beta_t sum_{s<t} e^{G_t - G_s} (k_t . k_s) u_s
//   o_t = e^{G_t} S_0 q_t + sum_{s<=t} e^{G_t - G_s} (k_s . q_t) u_s
//   S   = e^{G_m-1} S_0 + sum_s e^{G_m-1 - G_s} u_s k_s^T
void delta_net_chunks(const DeltaNetHeadRows& r, int64_t n, int64_t d, float* state, float* scratch) {
  float* G = scratch;                    // [C]
  float* eG = scratch + kDeltaNetChunk;  // [C]
  float* U = eG + kDeltaNetChunk;        // [C][d]
  for (int64_t c0 = 0; c0 < n; c0 += kDeltaNetChunk) {
    const int64_t m = std::min(kDeltaNetChunk, n - c0);
    const auto q = [&](int64_t t) { return r.q + (c0 + t) * r.stride; };
    const auto k = [&](int64_t t) { return r.k + (c0 + t) * r.stride; };
    const auto v = [&](int64_t t) { return r.v + (c0 + t) * r.stride; };
    const auto beta = [&](int64_t t) { return r.beta[(c0 + t) * r.gb_stride]; };
    float sum = 0;
    for (int64_t t = 0; t < m; ++t) {
      sum += r.g[(c0 + t) * r.gb_stride];
      G[t] = sum;
      eG[t] = std::exp(sum);
    }
    for (int64_t t = 0; t < m; ++t) {
      float* u = U + t * d;
      for (int64_t j = 0; j < d; ++j) u[j] = beta(t) * (v(t)[j] - eG[t] * dot(state + j * d, k(t), d));
      for (int64_t s = 0; s < t; ++s) axpy(u, U + s * d, -beta(t) * std::exp(G[t] - G[s]) * dot(k(t), k(s), d), d);
    }
    for (int64_t t = 0; t < m; ++t) {
      float* out = r.out + (c0 + t) * r.out_stride;
      for (int64_t j = 0; j < d; ++j) out[j] = eG[t] * dot(state + j * d, q(t), d);
      for (int64_t s = 0; s <= t; ++s) axpy(out, U + s * d, std::exp(G[t] - G[s]) * dot(k(s), q(t), d), d);
    }
    const float last = G[m - 1];
    for (int64_t j = 0; j < d; ++j) {
      float* row = state + j * d;
      for (int64_t i = 0; i < d; ++i) row[i] *= eG[m - 1];
      for (int64_t s = 0; s < m; ++s) axpy(row, k(s), std::exp(last - G[s]) * U[s * d + j], d);
    }
  }
}

}  // namespace inferscope::kernels
