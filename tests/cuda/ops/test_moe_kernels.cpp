// kernels/cuda/moe against the CPU: routing against kernels::moe_top_k, the combination against
// CpuOps::moe_combine's loop (built from kernels::add_scaled), on the emulator.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/cpu/ops.h"
#include "kernels/cuda/moe.h"
#include "tests/cuda/ops/device_buffer.h"
#include "tests/cuda/ops/kernel_check.h"

namespace inferscope::cuda_test {
namespace {

namespace ck = cuda_kernels;

struct Routes {
  std::vector<int32_t> ids;    // [n_tokens][k]
  std::vector<float> weights;  // [n_tokens][k]
};

Routes route_on_cpu(std::vector<float> logits, int64_t n_expert, int64_t k, bool renormalize) {
  const int64_t n_tokens = static_cast<int64_t>(logits.size()) / n_expert;
  Routes r{std::vector<int32_t>(n_tokens * k), std::vector<float>(n_tokens * k)};
  std::vector<int32_t> order(n_expert);
  for (int64_t t = 0; t < n_tokens; ++t) {
    kernels::moe_top_k(&logits[t * n_expert], n_expert, k, renormalize, order.data(), &r.ids[t * k], &r.weights[t * k]);
  }
  return r;
}

Routes route_on_device(const std::vector<float>& logits, int64_t n_expert, int64_t k, bool renormalize) {
  const int64_t n_tokens = static_cast<int64_t>(logits.size()) / n_expert;
  DeviceBuffer<float> d_logits(logits), weights(n_tokens * k);
  DeviceBuffer<int32_t> ids(n_tokens * k);
  EXPECT_EQ(ck::launch_moe_route(d_logits.get(), n_tokens, n_expert, k, renormalize, ids.get(), weights.get(), nullptr),
            cudaSuccess);
  return {ids.read(), weights.read()};
}

void expect_route_matches_cpu(const std::vector<float>& logits, int64_t n_expert, int64_t k) {
  for (const bool renormalize : {false, true}) {
    const Routes got = route_on_device(logits, n_expert, k, renormalize);
    const Routes want = route_on_cpu(logits, n_expert, k, renormalize);
    EXPECT_EQ(got.ids, want.ids) << n_expert << " " << k << " " << renormalize;
    EXPECT_LT(normalized_error(got.weights, want.weights), 1e-6) << n_expert << " " << k << " " << renormalize;
  }
}

// Tokens of random logits, then one whose largest logits tie across lanes and within a lane
// (experts e and e + 32 share a lane), then one of all-equal logits (ties everywhere).
std::vector<float> logits_with_ties(int64_t n_expert, int64_t n_random, uint32_t seed) {
  std::vector<float> logits = random_values(n_random * n_expert, seed, -4.0f, 4.0f);
  std::vector<float> tied = random_values(n_expert, seed + 1, -1.0f, 1.0f);
  for (const int64_t e : {n_expert - 1, int64_t{3}, int64_t{5}, 37 % n_expert}) tied[e] = 2.0f;
  logits.insert(logits.end(), tied.begin(), tied.end());
  logits.insert(logits.end(), n_expert, 0.5f);
  return logits;
}

TEST(CudaMoe, RouteMatchesCpu) {
  for (const int64_t n_expert : {8, 60}) {
    for (const int64_t k : {2, 4}) expect_route_matches_cpu(logits_with_ties(n_expert, 4, 1), n_expert, k);
  }
}

// Every expert chosen; the most experts and choices allowed (every lane owns 32 experts).
TEST(CudaMoe, RouteAtTheLimitsMatchesCpu) {
  expect_route_matches_cpu(logits_with_ties(8, 2, 2), 8, 8);
  expect_route_matches_cpu(logits_with_ties(1024, 1, 3), 1024, ck::kMaxExpertsUsed);
}

struct CombineInputs {
  int64_t n_tokens = 0, n_embd = 0, k = 0;
  std::vector<int32_t> ids;       // [n_tokens][k], distinct experts per token, in no order
  std::vector<float> weights;     // [n_tokens][k]
  std::vector<float> y;           // [n_tokens * k][n_embd]
  std::vector<float> shared_out;  // [n_tokens][n_embd]
  std::vector<float> gate;        // [n_embd]
  std::vector<float> h;           // [n_tokens][n_embd]
};

CombineInputs combine_inputs(int64_t n_tokens, int64_t n_embd, int64_t k, int64_t n_expert, uint32_t seed) {
  CombineInputs in;
  in.n_tokens = n_tokens;
  in.n_embd = n_embd;
  in.k = k;
  std::mt19937 rng(seed);
  std::vector<int32_t> experts(n_expert);
  std::iota(experts.begin(), experts.end(), 0);
  for (int64_t t = 0; t < n_tokens; ++t) {
    std::shuffle(experts.begin(), experts.end(), rng);
    in.ids.insert(in.ids.end(), experts.begin(), experts.begin() + k);
  }
  in.weights = random_values(n_tokens * k, seed + 1, 0.0f, 1.0f);
  in.y = random_values(n_tokens * k * n_embd, seed + 2);
  in.shared_out = random_values(n_tokens * n_embd, seed + 3);
  in.gate = random_values(n_embd, seed + 4, -0.2f, 0.2f);
  in.h = random_values(n_tokens * n_embd, seed + 5);
  return in;
}

// CpuOps::moe_combine's loop: each token's terms added in ascending expert id, then the shared
// expert scaled by its gate.
std::vector<float> combine_on_cpu(const CombineInputs& in, bool shared) {
  const int64_t E = in.n_embd, k = in.k;
  std::vector<float> out(in.n_tokens * E, 0.0f);
  for (int64_t t = 0; t < in.n_tokens; ++t) {
    const int32_t* ids = &in.ids[t * k];
    for (int32_t done = -1;;) {
      int64_t next = -1;
      for (int64_t j = 0; j < k; ++j) {
        if (ids[j] > done && (next < 0 || ids[j] < ids[next])) next = j;
      }
      if (next < 0) break;
      kernels::add_scaled(&out[t * E], &in.y[(t * k + next) * E], E, in.weights[t * k + next]);
      done = ids[next];
    }
    if (!shared) continue;
    float dot = 0.0f;
    for (int64_t i = 0; i < E; ++i) dot += in.gate[i] * in.h[t * E + i];
    kernels::add_scaled(&out[t * E], &in.shared_out[t * E], E, 1.0f / (1.0f + std::exp(-dot)));
  }
  return out;
}

std::vector<float> combine_on_device(const CombineInputs& in, bool shared) {
  DeviceBuffer<float> y(in.y), weights(in.weights), shared_out(in.shared_out), gate(in.gate), h(in.h);
  DeviceBuffer<int32_t> ids(in.ids);
  DeviceBuffer<float> out(in.n_tokens * in.n_embd);
  EXPECT_EQ(ck::launch_moe_combine(y.get(), ids.get(), weights.get(), in.n_tokens, in.n_embd, in.k,
                                   shared ? shared_out.get() : nullptr, shared ? gate.get() : nullptr,
                                   shared ? h.get() : nullptr, out.get(), nullptr),
            cudaSuccess);
  return out.read();
}

// The same additions in the same order: bit-identical (n_embd not a multiple of the block).
TEST(CudaMoe, CombineMatchesCpuExactly) {
  for (const int64_t k : {1, 4, 8}) {
    const CombineInputs in = combine_inputs(3, 300, k, 60, 20);
    EXPECT_EQ(combine_on_device(in, false), combine_on_cpu(in, false)) << k;
  }
}

// The gate's dot product is a tree sum on the device (the CPU's is serial).
TEST(CudaMoe, CombineWithSharedExpertMatchesCpu) {
  const CombineInputs in = combine_inputs(3, 300, 4, 60, 21);
  EXPECT_LT(normalized_error(combine_on_device(in, true), combine_on_cpu(in, true)), 1e-6);
}

}  // namespace
}  // namespace inferscope::cuda_test
