// Gated DeltaNet kernels (kernels/cpu/delta_net.h) against the gated delta rule as the paper
// writes it, in double: S_t = S_{t-1} alpha_t (I - beta_t k_t k_t^T) + beta_t v_t k_t^T, o_t =
// S_t q_t, alpha_t = exp(g_t). The token-by-token and the chunked kernels must both give it, over
// a span of three blocks (the last one partial), from a state that is not zero.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/delta_net.h"

namespace inferscope::kernels {
namespace {

constexpr int64_t kD = 16;
constexpr int64_t kTokens = 2 * kDeltaNetChunk + 37;

struct Inputs {
  std::vector<float> q, k, v, g, beta, state;
};

// q and k l2-normalized (q also scaled by 1/sqrt(d), as delta_net_prepare leaves them), decays
// in [-0.5, -0.01], updates in (0, 1).
Inputs random_inputs(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Inputs in;
  auto fill = [&](std::vector<float>& x, int64_t n) {
    x.resize(static_cast<size_t>(n));
    for (float& e : x) e = u(rng);
  };
  fill(in.q, kTokens * kD);
  fill(in.k, kTokens * kD);
  fill(in.v, kTokens * kD);
  fill(in.state, kD * kD);
  for (int64_t t = 0; t < kTokens; ++t) {
    for (auto [x, scale] : {std::pair{&in.q, 1.0f / std::sqrt(float(kD))}, {&in.k, 1.0f}}) {
      double sum = 0;
      for (int64_t i = 0; i < kD; ++i) sum += double((*x)[t * kD + i]) * (*x)[t * kD + i];
      for (int64_t i = 0; i < kD; ++i) (*x)[t * kD + i] *= scale / float(std::sqrt(sum));
    }
    in.g.push_back(-0.01f - 0.49f * (u(rng) + 1.0f) / 2.0f);
    in.beta.push_back((u(rng) + 1.0f) / 2.0f);
  }
  return in;
}

// The paper's form in double; sign flips the decay (a wrong sign must not pass for the rule).
std::vector<double> reference(const Inputs& in, std::vector<double>& state, double sign = 1.0) {
  std::vector<double> out(static_cast<size_t>(kTokens * kD));
  std::vector<double> next(static_cast<size_t>(kD * kD));
  for (int64_t t = 0; t < kTokens; ++t) {
    const double alpha = std::exp(sign * in.g[t]), beta = in.beta[t];
    const float* k = &in.k[t * kD];
    // next = S alpha (I - beta k k^T) + beta v k^T, S[j][i] with j the value index.
    for (int64_t j = 0; j < kD; ++j) {
      double sk = 0;
      for (int64_t i = 0; i < kD; ++i) sk += state[j * kD + i] * k[i];
      for (int64_t i = 0; i < kD; ++i) {
        next[j * kD + i] = alpha * (state[j * kD + i] - beta * sk * k[i]) + beta * in.v[t * kD + j] * k[i];
      }
    }
    state = next;
    for (int64_t j = 0; j < kD; ++j) {
      double o = 0;
      for (int64_t i = 0; i < kD; ++i) o += state[j * kD + i] * in.q[t * kD + i];
      out[t * kD + j] = o;
    }
  }
  return out;
}

DeltaNetHeadRows rows_of(const Inputs& in, std::vector<float>& out) {
  out.assign(static_cast<size_t>(kTokens * kD), 0.0f);
  return {in.q.data(), in.k.data(), in.v.data(), kD, in.g.data(), in.beta.data(), 1, out.data(), kD};
}

double max_diff(const std::vector<float>& a, const std::vector<double>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(double(a[i]) - b[i]));
  return worst;
}

TEST(DeltaNet, StepsAndChunksFollowTheGatedDeltaRule) {
  const Inputs in = random_inputs(7);
  std::vector<double> ref_state(in.state.begin(), in.state.end());
  const std::vector<double> ref = reference(in, ref_state);

  std::vector<float> step_out, chunk_out;
  std::vector<float> step_state = in.state, chunk_state = in.state;
  delta_net_steps(rows_of(in, step_out), kTokens, kD, step_state.data());
  std::vector<float> scratch(static_cast<size_t>(delta_net_chunk_scratch(kD)));
  delta_net_chunks(rows_of(in, chunk_out), kTokens, kD, chunk_state.data(), scratch.data());

  EXPECT_LT(max_diff(step_out, ref), 1e-5);
  EXPECT_LT(max_diff(chunk_out, ref), 1e-5);
  EXPECT_LT(max_diff(step_state, ref_state), 1e-5);
  EXPECT_LT(max_diff(chunk_state, ref_state), 1e-5);
  // The outputs are far from zero, and a flipped decay is far from them: the bounds above bite.
  std::vector<double> flipped_state(in.state.begin(), in.state.end());
  EXPECT_GT(max_diff(chunk_out, reference(in, flipped_state, -1.0)), 1e-2);
}

// In pieces (a prompt in two calls, then decode steps) the state carries over exactly as in one.
TEST(DeltaNet, ChunksResumeFromTheState) {
  const Inputs in = random_inputs(11);
  std::vector<float> whole, pieces(static_cast<size_t>(kTokens * kD));
  std::vector<float> whole_state = in.state, piece_state = in.state;
  std::vector<float> scratch(static_cast<size_t>(delta_net_chunk_scratch(kD)));
  delta_net_chunks(rows_of(in, whole), kTokens, kD, whole_state.data(), scratch.data());
  std::vector<float> ignored;
  DeltaNetHeadRows rows = rows_of(in, ignored);
  rows.out = pieces.data();
  const int64_t cut = kDeltaNetChunk + 5;
  delta_net_chunks(rows, cut, kD, piece_state.data(), scratch.data());
  for (auto* p : {&rows.q, &rows.k, &rows.v}) *p += cut * kD;
  rows.g += cut;
  rows.beta += cut;
  rows.out += cut * kD;
  delta_net_steps(rows, kTokens - cut, kD, piece_state.data());
  std::vector<double> as_double(whole.begin(), whole.end());
  EXPECT_LT(max_diff(pieces, as_double), 1e-5);
}

// The decay g = softplus(alpha + dt) a (negative for a < 0) and the update sigmoid(beta).
TEST(DeltaNet, PrepareGivesTheDecayAndTheUpdate) {
  std::vector<float> q = {3, 4}, k = {0, 2}, alpha = {0.3f, -25.0f}, beta = {0.7f, -1.2f};
  const float dt[] = {0.1f, 0.2f}, a[] = {-1.5f, -0.25f};
  delta_net_prepare(q.data(), k.data(), 2, 1, 2, alpha.data(), beta.data(), 2, dt, a, 1, 1e-6f);
  EXPECT_NEAR(q[0], 0.6 / std::sqrt(2.0), 1e-6);
  EXPECT_NEAR(q[1], 0.8 / std::sqrt(2.0), 1e-6);
  EXPECT_NEAR(k[1], 1.0, 1e-6);
  EXPECT_NEAR(alpha[0], std::log1p(std::exp(0.4)) * -1.5, 1e-6);
  EXPECT_NEAR(alpha[1], std::log1p(std::exp(-24.8)) * -0.25, 1e-12);
  EXPECT_NEAR(beta[0], 1.0 / (1.0 + std::exp(-0.7)), 1e-6);
  EXPECT_NEAR(beta[1], 1.0 / (1.0 + std::exp(1.2)), 1e-6);
}

// Each channel convolved over the state's inputs then the rows, in two calls (a prompt's rows
// split across chunks): the same as one, and the state ends holding the last three inputs.
TEST(DeltaNet, CausalConvolutionCarriesItsInputs) {
  constexpr int64_t C = 3, K = 4, N = 6;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> kernel(C * K), history((K - 1 + N) * C);  // the state's rows, then the inputs
  for (float& x : kernel) x = u(rng);
  for (float& x : history) x = u(rng);
  std::vector<float> state(history.begin(), history.begin() + (K - 1) * C);
  std::vector<float> x(history.begin() + (K - 1) * C, history.end());
  causal_conv_silu(x.data(), 2, C, kernel.data(), K, state.data(), 0, C);
  causal_conv_silu(x.data() + 2 * C, N - 2, C, kernel.data(), K, state.data(), 0, C);
  for (int64_t t = 0; t < N; ++t) {
    for (int64_t c = 0; c < C; ++c) {
      double sum = 0;
      for (int64_t j = 0; j < K; ++j) sum += double(kernel[c * K + j]) * history[(t + j) * C + c];
      EXPECT_NEAR(x[t * C + c], sum / (1.0 + std::exp(-sum)), 1e-6) << "row " << t << " channel " << c;
    }
  }
  for (int64_t i = 0; i < (K - 1) * C; ++i) EXPECT_EQ(state[i], history[(N * C) + i]);
}

}  // namespace
}  // namespace inferscope::kernels
