// kernels/cuda/rope against kernels::rope_angles + kernels::rope_apply, called per row as
// CpuOps::rope calls them, on the emulator.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/cpu/ops.h"
#include "kernels/cuda/rope.h"
#include "tests/cuda/ops/device_buffer.h"
#include "tests/cuda/ops/kernel_check.h"

namespace inferscope::cuda_test {
namespace {

namespace ck = cuda_kernels;

// The angles follow the CPU op by op; only cos/sin (a few ulp on a GPU) may differ.
constexpr double kTolerance = 1e-6;

// Scattered rows, one far along (its later pairs' running products over thousands of turns).
const std::vector<int32_t> kPositions = {0, 1, 37, 4000, 513};

struct RopeCase {
  ck::RopeShape shape;
  kernels::RopeParams params;  // freq_factors ignored: `factors` is the table
  std::vector<float> factors;  // [n_rot/2], or empty
};

struct QK {
  std::vector<float> q;  // [rows][n_head * head_dim]
  std::vector<float> k;  // [rows][n_head_kv * head_dim]
};

QK random_qk(const ck::RopeShape& s, size_t rows, uint32_t seed) {
  return {random_values(rows * s.n_head * s.head_dim, seed), random_values(rows * s.n_head_kv * s.head_dim, seed + 1)};
}

QK rope_on_cpu(const RopeCase& c, QK x, const std::vector<int32_t>& positions) {
  const ck::RopeShape& s = c.shape;
  kernels::RopeParams p = c.params;
  p.freq_factors = c.factors.empty() ? nullptr : c.factors.data();
  std::vector<float> cos_v(s.n_rot / 2), sin_v(s.n_rot / 2);
  for (size_t r = 0; r < positions.size(); ++r) {
    kernels::rope_angles(positions[r], s.n_rot, p, cos_v.data(), sin_v.data());
    kernels::rope_apply(&x.q[r * s.n_head * s.head_dim], s.n_head, s.head_dim, s.n_rot, cos_v.data(), sin_v.data(),
                        s.neox);
    kernels::rope_apply(&x.k[r * s.n_head_kv * s.head_dim], s.n_head_kv, s.head_dim, s.n_rot, cos_v.data(),
                        sin_v.data(), s.neox);
  }
  return x;
}

// A case's freq_factors on the device (`table`: null when it has none) and its angle parameters.
struct DeviceRope {
  explicit DeviceRope(const RopeCase& c)
      : factors(c.factors.empty() ? std::vector<float>(1) : c.factors),
        table(c.factors.empty() ? nullptr : factors.get()),
        angles(ck::rope_angle_params(c.params, c.shape.n_rot)) {}
  DeviceBuffer<float> factors;
  const float* table;
  ck::RopeAngleParams angles;
};

QK rope_on_device(const RopeCase& c, const QK& x, const std::vector<int32_t>& positions) {
  DeviceRope rope(c);
  DeviceBuffer<float> q(x.q), k(x.k);
  DeviceBuffer<int32_t> pos(positions);
  ck::ChunkRows chunk;
  chunk.pos = pos.get();
  EXPECT_EQ(ck::launch_rope(q.get(), k.get(), chunk, static_cast<int64_t>(positions.size()), c.shape, rope.angles,
                            rope.table, nullptr),
            cudaSuccess);
  return {q.read(), k.read()};
}

void expect_rope_matches_cpu(const RopeCase& c) {
  const QK x = random_qk(c.shape, kPositions.size(), 11);
  const QK got = rope_on_device(c, x, kPositions), want = rope_on_cpu(c, x, kPositions);
  EXPECT_LT(normalized_error(got.q, want.q), kTolerance);
  EXPECT_LT(normalized_error(got.k, want.k), kTolerance);
}

// GQA: fewer key heads than query heads.
ck::RopeShape gqa_shape(int64_t head_dim, int64_t n_rot, bool neox) {
  ck::RopeShape s;
  s.n_head = 6;
  s.n_head_kv = 2;
  s.head_dim = head_dim;
  s.n_rot = n_rot;
  s.neox = neox;
  return s;
}

TEST(CudaRope, NormalLayoutMatchesCpu) { expect_rope_matches_cpu({gqa_shape(64, 64, false), {}, {}}); }

TEST(CudaRope, NeoxLayoutMatchesCpu) { expect_rope_matches_cpu({gqa_shape(64, 64, true), {}, {}}); }

// The values past n_rot in each head are left exactly as they were.
TEST(CudaRope, PartialRotationMatchesCpu) {
  for (const bool neox : {false, true}) {
    const RopeCase c{gqa_shape(80, 32, neox), {}, {}};
    const QK x = random_qk(c.shape, kPositions.size(), 12);
    const QK got = rope_on_device(c, x, kPositions), want = rope_on_cpu(c, x, kPositions);
    EXPECT_LT(normalized_error(got.q, want.q), kTolerance) << neox;
    EXPECT_LT(normalized_error(got.k, want.k), kTolerance) << neox;
    for (size_t i = 0; i < x.q.size(); ++i) {
      if (static_cast<int64_t>(i) % c.shape.head_dim >= c.shape.n_rot) {
        ASSERT_EQ(got.q[i], x.q[i]) << i;
      }
    }
  }
}

// Llama 3.1's rope_freqs (factors dividing each pair's frequency), with a large freq_base.
TEST(CudaRope, FreqFactorsMatchCpu) {
  RopeCase c{gqa_shape(64, 64, false), {}, random_values(32, 13, 1.0f, 8.0f)};
  c.params.freq_base = 500000.0f;
  expect_rope_matches_cpu(c);
}

// YaRN (the ramp between interpolation and extrapolation) with its magnitude scale, and Phi-3's
// LongRoPE (factors with attn_factor).
TEST(CudaRope, YarnAndLongRopeMatchCpu) {
  RopeCase yarn{gqa_shape(64, 64, true), {}, {}};
  yarn.params.freq_scale = 0.25f;
  yarn.params.yarn_ext_factor = 1.0f;
  yarn.params.attn_factor = 1.1386f;
  kernels::rope_yarn_corr_dims(64, 4096, 10000.0f, 32.0f, 1.0f, &yarn.params.yarn_corr_low,
                               &yarn.params.yarn_corr_high);
  ASSERT_GT(yarn.params.yarn_corr_high, yarn.params.yarn_corr_low + 1.0f);  // a ramp over several pairs
  expect_rope_matches_cpu(yarn);

  RopeCase long_rope{gqa_shape(48, 48, true), {}, random_values(24, 14, 1.0f, 40.0f)};
  long_rope.params.attn_factor = 1.19f;
  expect_rope_matches_cpu(long_rope);
}

// Launched once into a captured graph, the rotation follows the positions in the buffer at each
// replay (a decode step's graph).
TEST(CudaRope, CapturedLaunchReadsEachReplaysPositions) {
  const RopeCase c{gqa_shape(64, 64, false), {}, {}};
  const std::vector<std::vector<int32_t>> steps = {{5, 900}, {6, 4001}, {7, 0}};
  DeviceRope rope(c);
  const QK x = random_qk(c.shape, 2, 15);
  DeviceBuffer<float> q(x.q.size()), k(x.k.size());
  DeviceBuffer<int32_t> pos(2);
  ck::ChunkRows chunk;
  chunk.pos = pos.get();

  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  ASSERT_EQ(ck::launch_rope(q.get(), k.get(), chunk, 2, c.shape, rope.angles, rope.table, stream), cudaSuccess);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  for (const std::vector<int32_t>& positions : steps) {
    ASSERT_EQ(cudaMemcpy(pos.get(), positions.data(), 2 * sizeof(int32_t), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(q.get(), x.q.data(), x.q.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(k.get(), x.k.data(), x.k.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    const QK want = rope_on_cpu(c, x, positions);
    EXPECT_LT(normalized_error(q.read(), want.q), kTolerance) << positions[1];
    EXPECT_LT(normalized_error(k.read(), want.k), kTolerance) << positions[1];
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace inferscope::cuda_test
