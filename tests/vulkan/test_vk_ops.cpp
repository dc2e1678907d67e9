// The non-matmul ops of the Vulkan backend (engine/backend/vulkan/ops) against the CPU kernels
// they stand in for, on random inputs of awkward sizes and at several workgroup sizes.
//
// Agreement is measured as the normalized mean squared error
//   NMSE = sum (gpu - cpu)^2 / sum cpu^2
// with these thresholds (what the arithmetic allows, each far below what a wrong index, layout or
// formula produces, which is NMSE >= 1e-3; several tests check that a deliberately wrong
// reference does fail by that much):
//   exact (bitwise): add, add_bias, add_scaled, scale, mul_columns, kv_store (F16 bits), moe_combine without
//                    the shared expert, moe_route ids
//   1e-11  rms_norm (F32 sums in another order; the CPU sums in double), swiglu, moe_route
//          weights, moe_combine with the shared expert (its gate's dot product order), softcap
//          and geglu (the device's tanh against the C library's); lavapipe: 1e-16..3e-14
//   1e-11  rope at positions < 300, 1e-9 up to position 70000 (the angles are bit-identical;
//          cos/sin are the device's builtins after an exact range reduction); lavapipe: 5e-17..4e-15
//   1e-6   attention against the CPU kernel, which rounds the normalized softmax weights to F16
//          while the tiled online softmax keeps them in F32: differences at the F16 rounding
//          level; lavapipe: 3e-8..6e-8 (0 for a context of 1)
//   1e-10  attention against the same formula in double precision (no F16 weights); lavapipe:
//          2e-14..4e-13
// Run with INFERSCOPE_PRINT_NMSE=1 to see each value.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/backend/vulkan/ops/vk_attention.h"
#include "engine/backend/vulkan/ops/vk_elementwise.h"
#include "engine/backend/vulkan/ops/vk_kv.h"
#include "engine/backend/vulkan/ops/vk_moe.h"
#include "engine/backend/vulkan/ops/vk_norm.h"
#include "engine/backend/vulkan/ops/vk_op_util.h"
#include "engine/backend/vulkan/ops/vk_rope.h"
#include "engine/backend/vulkan/vk_device.h"
#include "engine/backend/vulkan/vk_recorder.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/formats/fp16.h"
#include "kernels/cpu/ops.h"
#include "tests/support/vulkan_device.h"
#include "tests/support/vulkan_gpu.h"
#include "tests/vulkan/vk_attention_check.h"
#include "tests/vulkan/vk_op_checks.h"


namespace inferscope::vulkan {
namespace {

using namespace op_tests;

// ---------------------------------------------------------------------------------- rms_norm

// x_scale: the spread of x (at 3e-3, mean(x^2) is about eps, so eps matters).
void check_rms_norm(Device& device, int64_t rows, int64_t n, bool in_place, uint32_t seed, float x_scale = 3.0f) {
  SCOPED_TRACE("rms_norm rows=" + std::to_string(rows) + " n=" + std::to_string(n) + (in_place ? " in place" : ""));
  Gpu gpu(device);
  auto x = random_floats(static_cast<size_t>(rows * n), seed, x_scale);
  const auto w = random_floats(static_cast<size_t>(n), seed + 1);
  std::vector<float> want(x.size());
  for (int64_t r = 0; r < rows; ++r) kernels::rms_norm(x.data() + r * n, w.data(), want.data() + r * n, n, 1e-5f);
  const Buffer& xb = gpu.upload(x);
  const Buffer& wb = gpu.upload(w);
  const Buffer& yb = in_place ? xb : gpu.allocate(x.size() * sizeof(float));
  gpu.run([&] { return record_rms_norm(device, gpu.recorder(), whole(xb), whole(wb), whole(yb), rows, n, 1e-5f); });
  const auto got = gpu.read<float>(yb, x.size());
  EXPECT_LT(nmse(got, want), kNmseReduction);
  if (!in_place) {
    EXPECT_EQ(first_bit_difference(gpu.read<float>(xb, x.size()), x), -1) << "x was modified";
  }
}

TEST(VulkanOps, RmsNormMatchesCpu) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  check_rms_norm(*device, 1, 67, false, 1);
  check_rms_norm(*device, 7, 1000, false, 2);
  check_rms_norm(*device, 3, 4097, true, 3);
  check_rms_norm(*device, 5, 5, true, 4);
  check_rms_norm(*device, 2, 2048, false, 5, 3e-3f);
}

// ------------------------------------------------------------------------------- elementwise

TEST(VulkanOps, AddAndAddScaledAreExact) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  for (int64_t n : {1, 37, 100003}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    Gpu gpu(*device);
    const auto y = random_floats(static_cast<size_t>(n), 10), x = random_floats(static_cast<size_t>(n), 11, 5.0f);
    auto sum = y, scaled = y;
    kernels::add(sum.data(), x.data(), n);
    kernels::add_scaled(scaled.data(), x.data(), n, 0.3712f);
    const Buffer& yb = gpu.upload(y);
    const Buffer& y2 = gpu.upload(y);
    const Buffer& xb = gpu.upload(x);
    gpu.run([&] {
      INFERSCOPE_RETURN_IF_ERROR(record_add(*device, gpu.recorder(), whole(yb), whole(xb), n));
      return record_add_scaled(*device, gpu.recorder(), whole(y2), whole(xb), n, 0.3712f);
    });
    EXPECT_EQ(first_bit_difference(gpu.read<float>(yb, sum.size()), sum), -1);
    EXPECT_EQ(first_bit_difference(gpu.read<float>(y2, scaled.size()), scaled), -1);
  }
}

TEST(VulkanOps, AddBiasBroadcastsOverRows) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  Gpu gpu(*device);
  const int64_t rows = 7, cols = 896 + 3;
  const auto y = random_floats(static_cast<size_t>(rows * cols), 20), b = random_floats(static_cast<size_t>(cols), 21);
  auto want = y;
  for (int64_t r = 0; r < rows; ++r) kernels::add(want.data() + r * cols, b.data(), cols);
  const Buffer& yb = gpu.upload(y);
  const Buffer& bb = gpu.upload(b);
  gpu.run([&] { return record_add_bias(*device, gpu.recorder(), whole(yb), whole(bb), rows, cols); });
  EXPECT_EQ(first_bit_difference(gpu.read<float>(yb, want.size()), want), -1);
}

TEST(VulkanOps, ScaleIsExactAndSoftcapMatchesCpu) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  ScalarCpu scalar;
  const int64_t n = 32000 + 17;
  auto x = random_floats(static_cast<size_t>(n), 30, 20.0f);
  x[0] = 1e6f;  // far in the saturated range of tanh
  x[1] = -1e6f;
  x[2] = 0.0f;
  x[3] = 1e-3f;
  Gpu gpu(*device);
  const Buffer& sb = gpu.upload(x);
  const Buffer& cb = gpu.upload(x);
  const float scale = std::sqrt(2048.0f);
  gpu.run([&] {
    INFERSCOPE_RETURN_IF_ERROR(record_scale(*device, gpu.recorder(), whole(sb), n, scale));
    return record_softcap(*device, gpu.recorder(), whole(cb), n, 30.0f);
  });
  std::vector<float> scaled = x, capped = x;
  for (float& v : scaled) v *= scale;
  kernels::softcap(capped.data(), n, 30.0f);
  EXPECT_EQ(first_bit_difference(gpu.read<float>(sb, scaled.size()), scaled), -1);
  const auto got = gpu.read<float>(cb, capped.size());
  EXPECT_LT(nmse(got, capped), kNmseTanh);
  EXPECT_EQ(got[0], 30.0f);
  EXPECT_EQ(got[1], -30.0f);
  EXPECT_GT(nmse(x, capped), 1e-3) << "the test inputs do not exercise the cap";
}

// Gemma 4's gate times one layer's slice of the per-layer inputs (CpuOps::mul_columns), from a
// column in the middle of wider rows: bit for bit, and the inputs untouched.
TEST(VulkanOps, MulColumnsIsExact) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  for (const auto [rows, cols, slices, slice] : {std::array<int64_t, 4>{1, 256, 3, 1}, {7, 37, 5, 1}, {5, 1000, 2, 0}}) {
    SCOPED_TRACE("rows=" + std::to_string(rows) + " cols=" + std::to_string(cols) + " slice " + std::to_string(slice));
    const int64_t stride = slices * cols, col0 = slice * cols;
    const auto dst = random_floats(static_cast<size_t>(rows * cols), 40), src = random_floats(static_cast<size_t>(rows * stride), 41);
    auto want = dst;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) want[static_cast<size_t>(r * cols + c)] *= src[static_cast<size_t>(r * stride + col0 + c)];
    }
    Gpu gpu(*device);
    const Buffer& db = gpu.upload(dst);
    const Buffer& sb = gpu.upload(src);
    gpu.run([&] {
      return record_mul_columns(*device, gpu.recorder(), whole(db), BufferSpan{&sb, static_cast<uint64_t>(col0) * 4, 0},
                                rows, cols, stride);
    });
    EXPECT_EQ(first_bit_difference(gpu.read<float>(db, want.size()), want), -1);
    EXPECT_EQ(first_bit_difference(gpu.read<float>(sb, src.size()), src), -1) << "src was modified";
  }
}

void check_glu(Device& device, GluKind kind, int64_t rows, int64_t cols, bool fused, uint32_t seed) {
  SCOPED_TRACE(std::string(kind == GluKind::GeGlu         ? "geglu"
                           : kind == GluKind::SwigluOai   ? "swiglu_oai"
                           : kind == GluKind::SigmoidGate ? "sigmoid_gate"
                                                          : "swiglu") +
               " rows=" + std::to_string(rows) +
               " cols=" + std::to_string(cols) + (fused ? " fused gate|up rows" : ""));
  ScalarCpu scalar;
  Gpu gpu(device);
  std::vector<float> gate = random_floats(static_cast<size_t>(rows * cols), seed, 4.0f);
  // The clamped SwiGLU's up values reach past its limit of 7 too.
  const std::vector<float> up =
      random_floats(static_cast<size_t>(rows * cols), seed + 1, kind == GluKind::SwigluOai ? 6.0f : 1.0f);
  gate[0] = -100.0f;  // exp overflow in silu, saturated tanh in gelu
  if (gate.size() > 1) gate[1] = 100.0f;
  std::vector<float> want = gate;
  if (kind == GluKind::GeGlu) kernels::geglu(want.data(), up.data(), rows * cols);
  else if (kind == GluKind::SwigluOai) kernels::swiglu_oai(want.data(), up.data(), rows * cols);
  else if (kind == GluKind::SigmoidGate) kernels::sigmoid_gate(want.data(), up.data(), rows * cols);
  else kernels::swiglu(want.data(), up.data(), rows * cols);
  std::vector<float> got;
  if (fused) {
    // phi3's ffn_up output: each row is [gate | up]; the result goes in place into the gate half.
    std::vector<float> rows_buf(static_cast<size_t>(rows * 2 * cols));
    for (int64_t r = 0; r < rows; ++r) {
      std::copy_n(gate.data() + r * cols, cols, rows_buf.data() + r * 2 * cols);
      std::copy_n(up.data() + r * cols, cols, rows_buf.data() + r * 2 * cols + cols);
    }
    const Buffer& b = gpu.upload(rows_buf);
    const BufferSpan up_span{&b, static_cast<uint64_t>(cols) * sizeof(float), 0};
    gpu.run([&] {
      return record_glu(device, gpu.recorder(), kind, whole(b), up_span, whole(b), rows, cols, 2 * cols, 2 * cols,
                        2 * cols);
    });
    const auto all = gpu.read<float>(b, rows_buf.size());
    for (int64_t r = 0; r < rows; ++r) {
      got.insert(got.end(), all.begin() + r * 2 * cols, all.begin() + r * 2 * cols + cols);
      // The up half is left alone.
      EXPECT_TRUE(std::equal(all.begin() + r * 2 * cols + cols, all.begin() + (r + 1) * 2 * cols, up.begin() + r * cols));
    }
  } else {
    const Buffer& gb = gpu.upload(gate);
    const Buffer& ub = gpu.upload(up);
    const Buffer& ob = gpu.allocate(gate.size() * sizeof(float));
    gpu.run([&] { return record_glu(device, gpu.recorder(), kind, whole(gb), whole(ub), whole(ob), rows, cols); });
    got = gpu.read<float>(ob, gate.size());
  }
  EXPECT_LT(nmse(got, want), kind == GluKind::GeGlu ? kNmseTanh : kNmseReduction);
}

TEST(VulkanOps, SwigluMatchesCpu) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  check_glu(*device, GluKind::SwiGlu, 1, 1, false, 40);
  check_glu(*device, GluKind::SwiGlu, 5, 5632 + 1, false, 41);
  check_glu(*device, GluKind::SwiGlu, 3, 1024, true, 42);
}

TEST(VulkanOps, GegluMatchesCpu) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  check_glu(*device, GluKind::GeGlu, 1, 3, false, 50);
  check_glu(*device, GluKind::GeGlu, 9, 2049, false, 51);
  check_glu(*device, GluKind::GeGlu, 2, 512, true, 52);
}

TEST(VulkanOps, SwigluOaiMatchesCpu) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  check_glu(*device, GluKind::SwigluOai, 1, 1, false, 60);
  check_glu(*device, GluKind::SwigluOai, 7, 2880 + 3, false, 61);
  check_glu(*device, GluKind::SwigluOai, 2, 512, true, 62);
}

// Gated attention's output gate (qwen35): up times sigmoid(gate).
TEST(VulkanOps, SigmoidGateMatchesCpu) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  check_glu(*device, GluKind::SigmoidGate, 1, 1, false, 70);
  check_glu(*device, GluKind::SigmoidGate, 4, 1024 + 5, false, 71);
}

// gpt-oss's expert biases: each route's row gains its expert's bias row, exactly.
TEST(VulkanOps, AddExpertBiasTakesEachRoutesExpertRow) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  Gpu gpu(*device);
  const int64_t routes = 9, cols = 2880 + 5, n_expert = 6;
  const auto y = random_floats(static_cast<size_t>(routes * cols), 70);
  const auto bias = random_floats(static_cast<size_t>(n_expert * cols), 71);
  const std::vector<int32_t> ids = {5, 0, 3, 3, 1, 5, 2, 4, 0};
  auto want = y;
  for (int64_t r = 0; r < routes; ++r) kernels::add(want.data() + r * cols, bias.data() + ids[r] * cols, cols);
  const Buffer& yb = gpu.upload(y);
  const Buffer& bb = gpu.upload(bias);
  const Buffer& ib = gpu.upload(ids);
  gpu.run([&] {
    return record_add_expert_bias(*device, gpu.recorder(), whole(yb), whole(bb), n_expert, whole(ib), routes, cols);
  });
  EXPECT_EQ(first_bit_difference(gpu.read<float>(yb, want.size()), want), -1);
}

// -------------------------------------------------------------------------------------- rope

struct RopeCase {
  int64_t n_head, n_head_kv, head_dim, n_rot;
  bool neox;
  int64_t n_tokens, pos0;
  bool freq_factors, yarn;
  float freq_scale, attn_factor;
};

std::string describe(const RopeCase& c) {
  return "rope heads " + std::to_string(c.n_head) + "/" + std::to_string(c.n_head_kv) + " hd " +
         std::to_string(c.head_dim) + " n_rot " + std::to_string(c.n_rot) + (c.neox ? " neox" : " normal") +
         " tokens " + std::to_string(c.n_tokens) + " pos0 " + std::to_string(c.pos0) +
         (c.freq_factors ? " factors" : "") + (c.yarn ? " yarn" : "");
}

// Returns the NMSE of q and k (together) against the CPU; `wrong_layout` computes the CPU side
// with the other pair layout (for the test's own sensitivity check).
// pad > 0: q, k and the factors start `pad` floats into their buffers.
double rope_nmse(Device& device, const RopeCase& c, uint32_t seed, bool wrong_layout = false, int64_t pad = 0) {
  Gpu gpu(device);
  const int64_t Q = c.n_head * c.head_dim, KV = c.n_head_kv * c.head_dim;
  const auto q = random_floats(static_cast<size_t>(c.n_tokens * Q), seed);
  const auto k = random_floats(static_cast<size_t>(c.n_tokens * KV), seed + 1);
  std::vector<float> factors(static_cast<size_t>(c.n_rot / 2));
  std::mt19937 rng(seed + 2);
  std::uniform_real_distribution<float> factor_dist(1.0f, 40.0f);
  for (float& f : factors) f = factor_dist(rng);
  factors[0] = 1.0f;

  kernels::RopeParams params;
  params.freq_base = c.yarn ? 1000000.0f : 10000.0f;
  params.freq_scale = c.freq_scale;
  params.attn_factor = c.attn_factor;
  if (c.freq_factors) params.freq_factors = factors.data();
  if (c.yarn) {
    params.yarn_ext_factor = 1.0f;
    kernels::rope_yarn_corr_dims(c.n_rot, 4096, params.freq_base, 32.0f, 1.0f, &params.yarn_corr_low,
                                 &params.yarn_corr_high);
  }
  auto want_q = q, want_k = k;
  std::vector<float> cs(static_cast<size_t>(c.n_rot / 2)), sn(cs.size());
  for (int64_t t = 0; t < c.n_tokens; ++t) {
    kernels::rope_angles(c.pos0 + t, c.n_rot, params, cs.data(), sn.data());
    const bool neox = wrong_layout ? !c.neox : c.neox;
    kernels::rope_apply(want_q.data() + t * Q, c.n_head, c.head_dim, c.n_rot, cs.data(), sn.data(), neox);
    kernels::rope_apply(want_k.data() + t * KV, c.n_head_kv, c.head_dim, c.n_rot, cs.data(), sn.data(), neox);
  }
  const uint64_t at = static_cast<uint64_t>(pad) * sizeof(float);
  const Buffer& qb = gpu.upload(padded(q, pad));
  const Buffer& kb = gpu.upload(padded(k, pad));
  const Buffer& fb = gpu.upload(padded(factors, pad));
  const RopeDims dims{c.n_head, c.n_head_kv, c.head_dim, c.n_rot, c.neox};
  gpu.run([&] {
    return record_rope(device, gpu.recorder(), BufferSpan{&qb, at, 0}, BufferSpan{&kb, at, 0},
                       c.freq_factors ? BufferSpan{&fb, at, 0} : BufferSpan{}, dims, params, c.n_tokens, c.pos0);
  });
  auto got = gpu.read<float>(qb, q.size(), at);
  const auto got_k = gpu.read<float>(kb, k.size(), at);
  got.insert(got.end(), got_k.begin(), got_k.end());
  auto want = want_q;
  want.insert(want.end(), want_k.begin(), want_k.end());
  return nmse(got, want);
}

const RopeCase kRopeCases[] = {
    // heads  hd   n_rot neox   tokens pos0 factors yarn  scale  attn
    {4, 2, 64, 64, false, 1, 0, false, false, 1.0f, 1.0f},
    {4, 2, 64, 64, true, 17, 3, false, false, 1.0f, 1.0f},
    {6, 1, 80, 80, true, 5, 290, false, false, 1.0f, 1.0f},
    {6, 1, 80, 32, false, 7, 11, false, false, 1.0f, 1.0f},  // partial rotation (phi-2 style)
    {4, 2, 128, 128, false, 9, 100, true, false, 1.0f, 1.0f},  // Llama 3.1 rope_freqs
    {4, 2, 128, 96, true, 3, 250, true, false, 1.0f, 1.19f},   // LongRoPE factors + attn_factor
    {4, 4, 256, 256, true, 2, 123, false, true, 0.25f, 1.1386f},  // YaRN
    {6, 2, 256, 128, false, 4, 7, true, true, 0.5f, 1.0f},     // YaRN with factors, partial
    {32, 8, 128, 128, false, 1, 299, false, false, 0.5f, 1.0f},  // linear scaling, decode
    {8, 8, 8, 8, false, 6, 30, false, false, 1.0f, 1.0f},        // stories260K's tiny heads
};

TEST(VulkanOps, RopeMatchesCpu) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  uint32_t seed = 100;
  for (const RopeCase& c : kRopeCases) {
    SCOPED_TRACE(describe(c));
    EXPECT_LT(rope_nmse(*device, c, seed), kNmseRope);
    seed += 10;
  }
}

TEST(VulkanOps, RopeLargePositions) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  const RopeCase cases[] = {
      {4, 2, 128, 128, false, 3, 4093, false, false, 1.0f, 1.0f},
      {4, 2, 128, 128, true, 2, 32766, true, false, 1.0f, 1.0f},
      {4, 1, 64, 64, true, 2, 70000, false, true, 0.125f, 1.2f},
  };
  for (const RopeCase& c : cases) {
    SCOPED_TRACE(describe(c));
    EXPECT_LT(rope_nmse(*device, c, 7), kNmseRopeFar);
  }
}

TEST(VulkanOps, RopeTestDetectsTheWrongPairLayout) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  EXPECT_GT(rope_nmse(*device, kRopeCases[1], 5, /*wrong_layout=*/true), 1e-3);
  EXPECT_GT(rope_nmse(*device, kRopeCases[4], 5, /*wrong_layout=*/true), 1e-3);
}

// --------------------------------------------------------------------------------------- MoE

struct Routes {
  std::vector<int32_t> ids;
  std::vector<float> weights;
};

// The CPU backend's routing (kernels::moe_top_k), token by token.
Routes cpu_route(std::vector<float> logits, int64_t n, int64_t n_expert, int64_t k, bool renormalize) {
  Routes r{std::vector<int32_t>(static_cast<size_t>(n * k)), std::vector<float>(static_cast<size_t>(n * k))};
  std::vector<int32_t> order(static_cast<size_t>(n_expert));
  for (int64_t t = 0; t < n; ++t) {
    kernels::moe_top_k(logits.data() + t * n_expert, n_expert, k, renormalize, order.data(), r.ids.data() + t * k,
                       r.weights.data() + t * k);
  }
  return r;
}

Routes gpu_route(Device& device, const std::vector<float>& logits, int64_t n, int64_t n_expert, int64_t k,
                 bool renormalize) {
  Gpu gpu(device);
  const Buffer& lb = gpu.upload(logits);
  const Buffer& ib = gpu.allocate(static_cast<uint64_t>(n * k) * 4);
  const Buffer& wb = gpu.allocate(static_cast<uint64_t>(n * k) * 4);
  gpu.run([&] {
    return record_moe_route(device, gpu.recorder(), whole(lb), whole(ib), whole(wb), n, n_expert, k, renormalize);
  });
  return {gpu.read<int32_t>(ib, static_cast<size_t>(n * k)), gpu.read<float>(wb, static_cast<size_t>(n * k))};
}

TEST(VulkanOps, MoeRouteMatchesCpu) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  struct Case {
    int64_t n, n_expert, k;
    bool renormalize;
  };
  // Mixtral (8, top 2, renormalized), qwen2moe (60, top 4), many small experts (128, top 8).
  for (const Case& c : {Case{13, 8, 2, true}, Case{7, 60, 4, false}, Case{5, 128, 8, true}, Case{1, 3, 3, false}}) {
    SCOPED_TRACE("n=" + std::to_string(c.n) + " experts=" + std::to_string(c.n_expert) + " k=" + std::to_string(c.k));
    const auto logits = random_floats(static_cast<size_t>(c.n * c.n_expert), 500 + static_cast<uint32_t>(c.n_expert), 2.0f);
    const Routes want = cpu_route(logits, c.n, c.n_expert, c.k, c.renormalize);
    const Routes got = gpu_route(*device, logits, c.n, c.n_expert, c.k, c.renormalize);
    EXPECT_EQ(got.ids, want.ids);
    EXPECT_LT(nmse(got.weights, want.weights), kNmseReduction);
  }
}

TEST(VulkanOps, MoeRouteTiesPickTheLowerIndex) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  const std::vector<float> logits = {
      1.0f, 3.0f, 3.0f, 0.0f, 3.0f, 2.0f,  // three-way tie for the top: experts 1, 2
      5.0f, 5.0f, 5.0f, 5.0f, 5.0f, 5.0f,  // all equal: 0, 1
      0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 1.0f,  // the tie is the top pair: 4, 5
  };
  const Routes want = cpu_route(logits, 3, 6, 2, false);
  const Routes got = gpu_route(*device, logits, 3, 6, 2, false);
  EXPECT_EQ(want.ids, (std::vector<int32_t>{1, 2, 0, 1, 4, 5}));
  EXPECT_EQ(got.ids, want.ids);
  EXPECT_LT(nmse(got.weights, want.weights), kNmseReduction);
}

// CpuOps::moe_combine's accumulation: experts in ascending id, then the shared expert.
std::vector<float> cpu_combine(const std::vector<float>& y, const Routes& r, int64_t n, int64_t E, int64_t k,
                               int64_t n_expert, const std::vector<float>* shexp_out, const std::vector<float>* gate_inp,
                               const std::vector<float>* h) {
  std::vector<float> out(static_cast<size_t>(n * E), 0.0f);
  for (int64_t e = 0; e < n_expert; ++e) {
    for (int64_t t = 0; t < n; ++t) {
      for (int64_t j = 0; j < k; ++j) {
        const size_t s = static_cast<size_t>(t * k + j);
        if (r.ids[s] != e) continue;
        kernels::add_scaled(out.data() + t * E, y.data() + static_cast<int64_t>(s) * E, E, r.weights[s]);
      }
    }
  }
  if (shexp_out) {
    for (int64_t t = 0; t < n; ++t) {
      float dot = 0.0f;
      for (int64_t i = 0; i < E; ++i) dot += (*gate_inp)[static_cast<size_t>(i)] * (*h)[static_cast<size_t>(t * E + i)];
      const float gate = 1.0f / (1.0f + std::exp(-dot));
      kernels::add_scaled(out.data() + t * E, shexp_out->data() + t * E, E, gate);
    }
  }
  return out;
}

void check_moe_combine(Device& device, int64_t n, int64_t E, int64_t n_expert, int64_t k, bool shared,
                       uint32_t seed) {
  SCOPED_TRACE("moe_combine n=" + std::to_string(n) + " E=" + std::to_string(E) + " k=" + std::to_string(k) +
               (shared ? " + shared expert" : ""));
  const auto logits = random_floats(static_cast<size_t>(n * n_expert), seed);
  const Routes r = cpu_route(logits, n, n_expert, k, !shared);
  const auto y = random_floats(static_cast<size_t>(n * k * E), seed + 1);
  const auto shexp_out = random_floats(static_cast<size_t>(n * E), seed + 2);
  const auto gate_inp = random_floats(static_cast<size_t>(E), seed + 3, 0.05f);
  const auto h = random_floats(static_cast<size_t>(n * E), seed + 4);
  const auto want = cpu_combine(y, r, n, E, k, n_expert, shared ? &shexp_out : nullptr, &gate_inp, &h);

  Gpu gpu(device);
  const Buffer& yb = gpu.upload(y);
  const Buffer& ib = gpu.upload(r.ids);
  const Buffer& wb = gpu.upload(r.weights);
  const Buffer& ob = gpu.allocate(static_cast<uint64_t>(n * E) * sizeof(float));
  const Buffer& sb = gpu.upload(shexp_out);
  const Buffer& gb = gpu.upload(gate_inp);
  const Buffer& hb = gpu.upload(h);
  const SharedExpertInputs inputs{whole(sb), whole(gb), whole(hb)};
  gpu.run([&] {
    return record_moe_combine(device, gpu.recorder(), whole(yb), whole(ib), whole(wb), whole(ob), n, E, k,
                              shared ? &inputs : nullptr);
  });
  const auto got = gpu.read<float>(ob, want.size());
  if (shared) {
    EXPECT_LT(nmse(got, want), kNmseReduction);
    // Without the gate the result is far off: the shared term matters in this test.
    const auto routed_only = cpu_combine(y, r, n, E, k, n_expert, nullptr, nullptr, nullptr);
    EXPECT_GT(nmse(got, routed_only), 1e-3);
  } else {
    EXPECT_EQ(first_bit_difference(got, want), -1);
  }
}

TEST(VulkanOps, MoeCombineMatchesCpu) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  check_moe_combine(*device, 5, 1000, 8, 2, false, 600);
  check_moe_combine(*device, 3, 67, 60, 4, false, 610);
  check_moe_combine(*device, 9, 2048, 64, 8, false, 620);
}

TEST(VulkanOps, MoeCombineWithSharedExpert) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  check_moe_combine(*device, 4, 896, 60, 4, true, 700);
  check_moe_combine(*device, 1, 33, 8, 2, true, 710);
}

// ------------------------------------------------------------------------- workgroup sizes

// Shaders must give the same results at every workgroup size the host may pick.
TEST(VulkanOps, EveryWorkgroupSize) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  for (uint32_t wg : {8u, 16u, 64u, 512u, 1024u}) {
    if (wg > device->info().max_workgroup_invocations) continue;
    SCOPED_TRACE("workgroup size " + std::to_string(wg));
    WorkgroupSize forced(wg);
    check_rms_norm(*device, 3, 1001, false, 800);
    check_glu(*device, GluKind::GeGlu, 3, 333, true, 801);
    EXPECT_LT(rope_nmse(*device, kRopeCases[5], 802), kNmseRope);
    EXPECT_LT(rope_nmse(*device, kRopeCases[7], 803), kNmseRope);
    EXPECT_LT(attention_nmse(*device, kAttentionCases[1], 804), kNmseAttention);
    EXPECT_LT(attention_nmse(*device, kAttentionCases[6], 805), kNmseAttention);
    EXPECT_LT(attention_nmse(*device, kAttentionCases[2], 809, {.n_split = 5}), kNmseAttention);
    EXPECT_LT(attention_nmse(*device, kAttentionCases[3], 806, {.via_kv_store = true}), kNmseAttention);
    check_moe_combine(*device, 3, 500, 8, 2, true, 807);
    check_moe_combine(*device, 2, 129, 16, 3, false, 808);
    const auto logits = random_floats(5 * 60, 809, 2.0f);
    const Routes want = cpu_route(logits, 5, 60, 4, true);
    EXPECT_EQ(gpu_route(*device, logits, 5, 60, 4, true).ids, want.ids);
  }
}

// ------------------------------------------------------------------------------ offsets

// Operands may start at any whole float of a buffer (rows in the middle of a batch), not only at
// minStorageBufferOffsetAlignment: the wrappers bind from the aligned offset before them.
TEST(VulkanOps, OperandsMayStartAtAnyWholeFloat) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  {
    SCOPED_TRACE("rms_norm of rows 2..4 of a batch");
    Gpu gpu(*device);
    const int64_t n = 67;
    const auto x = random_floats(static_cast<size_t>(5 * n), 900, 2.0f);
    const auto w = random_floats(static_cast<size_t>(n + 1), 901);
    std::vector<float> want(static_cast<size_t>(3 * n));
    for (int64_t r = 0; r < 3; ++r) kernels::rms_norm(x.data() + (2 + r) * n, w.data() + 1, want.data() + r * n, n, 1e-6f);
    const Buffer& xb = gpu.upload(x);
    const Buffer& wb = gpu.upload(w);
    const Buffer& yb = gpu.allocate(static_cast<uint64_t>(3 + 3 * n) * 4);
    gpu.run([&] {
      return record_rms_norm(*device, gpu.recorder(), BufferSpan{&xb, static_cast<uint64_t>(2 * n) * 4, 0},
                             BufferSpan{&wb, 4, 0}, BufferSpan{&yb, 12, 0}, 3, n, 1e-6f);
    });
    EXPECT_LT(nmse(gpu.read<float>(yb, want.size(), 12), want), kNmseReduction);
  }
  {
    SCOPED_TRACE("moe_route of the last token into routes at float 1");
    Gpu gpu(*device);
    const auto logits = random_floats(3 * 60, 902, 2.0f);
    const Routes want = cpu_route(std::vector<float>(logits.begin() + 120, logits.end()), 1, 60, 4, false);
    const Buffer& lb = gpu.upload(logits);
    const Buffer& ib = gpu.allocate(20);
    const Buffer& wb = gpu.allocate(20);
    gpu.run([&] {
      return record_moe_route(*device, gpu.recorder(), BufferSpan{&lb, 120 * 4, 0}, BufferSpan{&ib, 4, 0},
                              BufferSpan{&wb, 4, 0}, 1, 60, 4, false);
    });
    EXPECT_EQ(gpu.read<int32_t>(ib, 4, 4), want.ids);
    EXPECT_LT(nmse(gpu.read<float>(wb, 4, 4), want.weights), kNmseReduction);
  }
  EXPECT_LT(rope_nmse(*device, kRopeCases[4], 903, false, /*pad=*/3), kNmseRope);
  EXPECT_LT(attention_nmse(*device, kAttentionCases[6], 904, {.via_kv_store = true, .pad = 1, .n_split = 3}), kNmseAttention);
}

// ---------------------------------------------------------------------------- preconditions

TEST(VulkanOps, WrappersRejectBadArguments) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  Gpu gpu(*device);
  const Buffer& small = gpu.allocate(64);
  const Buffer& big = gpu.allocate(1 << 16);
  gpu.begin();
  Recorder& rec = gpu.recorder();
  // Too small a span.
  EXPECT_FALSE(record_add(*device, rec, whole(small), whole(big), 17));
  EXPECT_FALSE(record_rms_norm(*device, rec, whole(big), whole(small), whole(big), 2, 100, 1e-5f));
  // Not a whole float from the buffer's start.
  EXPECT_FALSE(record_scale(*device, rec, BufferSpan{&big, 2, 0}, 8, 2.0f));
  EXPECT_FALSE(record_softcap(*device, rec, whole(big), 8, 0.0f));
  const RopeDims odd_rot{4, 2, 64, 63, false};
  EXPECT_FALSE(record_rope(*device, rec, whole(big), whole(big), {}, odd_rot, {}, 1, 0));
  const KvCacheLayout layout = pool_layout(2, 128, 16, 2);  // 32 rows per layer
  const std::vector<int32_t> table = {1, 0}, outside = {0, 2};
  const KvBlockTable blocks{whole(big), table}, bad_blocks{whole(big), outside};
  EXPECT_FALSE(record_kv_store(*device, rec, whole(big), whole(big), whole(big), whole(big), layout, 0, blocks, 30, 7))
      << "positions past the block table";
  EXPECT_FALSE(record_kv_store(*device, rec, whole(big), whole(big), whole(small), whole(small), layout, 0, blocks, 0, 1))
      << "cache too small";
  EXPECT_FALSE(record_kv_store(*device, rec, whole(big), whole(big), whole(big), whole(big), layout, 0, bad_blocks, 16, 1))
      << "a block outside the pool";
  EXPECT_FALSE(record_kv_store(*device, rec, whole(big), whole(big), whole(big), whole(big), layout, 2, blocks, 0, 1))
      << "layer outside the cache";
  const AttentionParams gqa{8, 4, 32, 1.0f, 0.0f, 0}, bad_gqa{6, 4, 32, 1.0f, 0.0f, 0};
  EXPECT_FALSE(
      record_attention(*device, rec, whole(big), whole(big), whole(big), layout, 0, blocks, whole(big), bad_gqa, 1, 0));
  EXPECT_FALSE(
      record_attention(*device, rec, whole(big), whole(big), whole(big), layout, 0, bad_blocks, whole(big), gqa, 1, 16))
      << "a block outside the pool";
  EXPECT_FALSE(record_attention(*device, rec, whole(big), whole(big), whole(big), layout, 0, blocks, whole(big), gqa, 2, 31))
      << "positions past the block table";
  EXPECT_FALSE(record_moe_route(*device, rec, whole(big), whole(big), whole(big), 1, 8, 9, false)) << "k > n_expert";
  EXPECT_FALSE(record_moe_combine(*device, rec, whole(big), whole(big), whole(big), whole(big), 1, 8, 33));
  // Nothing was recorded, so the submission is empty and fine.
  EXPECT_EQ(rec.dispatches(), 0u);
  EXPECT_TRUE(rec.submit_and_wait());
}

}  // namespace
}  // namespace inferscope::vulkan
