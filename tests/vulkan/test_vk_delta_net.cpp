// A hybrid model's Gated DeltaNet ops on the Vulkan device (ops/vk_delta_net.h) against the CPU
// kernels they stand in for (kernels/cpu/delta_net.h), on random inputs: the convolution and its
// state, and the prepared recurrence with its state, from a zero state and going on from one,
// for both head mappings and at several workgroup sizes (a state row per invocation, so a head's
// rows spread over one or several workgroups). NMSE (test_vk_ops.cpp): 1e-10, the sums in
// another order (lavapipe: ~1e-14).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/backend/vulkan/ops/vk_delta_net.h"
#include "kernels/cpu/delta_net.h"
#include "tests/support/vulkan_device.h"
#include "tests/support/vulkan_gpu.h"
#include "tests/vulkan/vk_op_checks.h"

namespace inferscope::vulkan {
namespace {

using namespace op_tests;

constexpr double kNmseDeltaNet = 1e-10;

struct ConvCase {
  int64_t n, channels, taps;
  bool fresh;
};

void check_ssm_conv(Device& device, const ConvCase& c, uint32_t seed) {
  SCOPED_TRACE("ssm_conv n=" + std::to_string(c.n) + " channels=" + std::to_string(c.channels) +
               " taps=" + std::to_string(c.taps) + (c.fresh ? " fresh" : ""));
  Gpu gpu(device);
  const std::vector<float> x = random_floats(static_cast<size_t>(c.n * c.channels), seed);
  const std::vector<float> kernel = random_floats(static_cast<size_t>(c.channels * c.taps), seed + 1, 0.5f);
  const std::vector<float> state = random_floats(static_cast<size_t>((c.taps - 1) * c.channels), seed + 2);
  std::vector<float> want = x, want_state = c.fresh ? std::vector<float>(state.size(), 0.0f) : state;
  kernels::causal_conv_silu(want.data(), c.n, c.channels, kernel.data(), c.taps, want_state.data(), 0, c.channels);
  // The rows start 3 floats into their buffer, as a later span's do.
  const Buffer& xb = gpu.upload(padded(x, 3));
  const Buffer& kb = gpu.upload(kernel);
  const Buffer& sb = gpu.upload(state);
  gpu.run([&] {
    return record_ssm_conv(device, gpu.recorder(), BufferSpan{&xb, 12, 0}, whole(kb), whole(sb), c.n, c.channels,
                           c.taps, c.fresh);
  });
  EXPECT_LT(nmse(gpu.read<float>(xb, x.size(), 12), want), kNmseDeltaNet);
  EXPECT_LT(nmse(gpu.read<float>(sb, state.size()), want_state), kNmseDeltaNet);
}

struct RecurrenceCase {
  DeltaNetShape shape;
  int64_t n;
  bool fresh;
};

DeltaNetShape shape(int64_t n_k_heads, int64_t n_v_heads, int64_t head_dim, bool grouped) {
  DeltaNetShape s;
  s.conv_kernel = 4;
  s.n_k_heads = n_k_heads;
  s.n_v_heads = n_v_heads;
  s.head_dim = head_dim;
  s.grouped_heads = grouped;
  return s;
}

// prepare then the recurrence, both on the device, against delta_net_prepare and
// delta_net_steps per value head.
void check_delta_net(Device& device, const RecurrenceCase& c, uint32_t seed) {
  const DeltaNetShape& d = c.shape;
  SCOPED_TRACE("delta_net n=" + std::to_string(c.n) + " heads " + std::to_string(d.n_k_heads) + "/" +
               std::to_string(d.n_v_heads) + " of " + std::to_string(d.head_dim) + (d.grouped_heads ? " grouped" : "") +
               (c.fresh ? " fresh" : ""));
  constexpr float kEps = 1e-6f;
  const int64_t C = d.channels(), H = d.n_v_heads, hd = d.head_dim;
  Gpu gpu(device);
  const std::vector<float> conv = random_floats(static_cast<size_t>(c.n * C), seed);
  const std::vector<float> alpha = random_floats(static_cast<size_t>(c.n * H), seed + 1);
  const std::vector<float> beta = random_floats(static_cast<size_t>(c.n * H), seed + 2);
  const std::vector<float> dt = random_floats(static_cast<size_t>(H), seed + 3);
  const std::vector<float> a = random_floats(static_cast<size_t>(H), seed + 4, 0.5f);
  const std::vector<float> state = random_floats(static_cast<size_t>(d.matrix_floats()), seed + 5, 0.1f);

  std::vector<float> q = conv, g = alpha, b = beta;
  kernels::delta_net_prepare(q.data(), q.data() + d.key_dim(), C, d.n_k_heads, hd, g.data(), b.data(), H, dt.data(),
                             a.data(), c.n, kEps);
  std::vector<float> want(static_cast<size_t>(c.n * d.value_dim()));
  std::vector<float> want_state = c.fresh ? std::vector<float>(state.size(), 0.0f) : state;
  for (int64_t h = 0; h < H; ++h) {
    const int64_t kh = d.key_head(h);
    const kernels::DeltaNetHeadRows rows{q.data() + kh * hd,  q.data() + d.key_dim() + kh * hd,
                                         q.data() + 2 * d.key_dim() + h * hd, C, g.data() + h, b.data() + h, H,
                                         want.data() + h * hd, d.value_dim()};
    kernels::delta_net_steps(rows, c.n, hd, want_state.data() + h * hd * hd);
  }

  const Buffer& cb = gpu.upload(conv);
  const Buffer& ab = gpu.upload(alpha);
  const Buffer& bb = gpu.upload(beta);
  const Buffer& db = gpu.upload(dt);
  const Buffer& rb = gpu.upload(a);
  const Buffer& sb = gpu.upload(state);
  const Buffer& ob = gpu.allocate(want.size() * sizeof(float));
  gpu.run([&]() -> Status {
    INFERSCOPE_RETURN_IF_ERROR(record_delta_net_prepare(device, gpu.recorder(), d, whole(cb), whole(ab), whole(bb),
                                                        whole(db), whole(rb), c.n, kEps));
    return record_delta_net(device, gpu.recorder(), d, whole(cb), whole(ab), whole(bb), whole(ob), whole(sb), c.n,
                            c.fresh);
  });
  EXPECT_LT(nmse(gpu.read<float>(cb, conv.size()), q), kNmseDeltaNet) << "prepared q, k";
  EXPECT_LT(nmse(gpu.read<float>(ab, alpha.size()), g), kNmseDeltaNet) << "decays";
  EXPECT_LT(nmse(gpu.read<float>(ob, want.size()), want), kNmseDeltaNet) << "outputs";
  EXPECT_LT(nmse(gpu.read<float>(sb, state.size()), want_state), kNmseDeltaNet) << "state";
}

void check_all(Device& device) {
  check_ssm_conv(device, {1, 256, 4, false}, 10);
  check_ssm_conv(device, {9, 333, 4, true}, 11);
  check_ssm_conv(device, {5, 70, 2, false}, 12);
  check_ssm_conv(device, {3, 40, 8, false}, 13);
  check_delta_net(device, {shape(2, 4, 32, false), 1, false}, 20);
  check_delta_net(device, {shape(2, 4, 32, false), 7, true}, 21);
  check_delta_net(device, {shape(2, 6, 64, true), 5, false}, 22);
  check_delta_net(device, {shape(1, 2, 48, true), 3, false}, 23);
}

TEST(VulkanDeltaNet, MatchesTheCpuKernels) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  ScalarCpu scalar;
  check_all(*device);
}

TEST(VulkanDeltaNet, EveryWorkgroupSize) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  ScalarCpu scalar;
  for (uint32_t wg : {8u, 16u, 1024u}) {
    if (wg > device->info().max_workgroup_invocations) continue;
    SCOPED_TRACE("workgroup size " + std::to_string(wg));
    WorkgroupSize forced(wg);
    check_all(*device);
  }
}

TEST(VulkanDeltaNet, RefusesWhatTheShadersCannotHold) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  Gpu gpu(*device);
  const Buffer& b = gpu.allocate(1 << 20);
  gpu.begin();
  EXPECT_FALSE(record_ssm_conv(*device, gpu.recorder(), whole(b), whole(b), whole(b), 1, 8, kGpuMaxConvTaps + 1, true));
  EXPECT_FALSE(record_delta_net(*device, gpu.recorder(), shape(1, 1, kGpuMaxDeltaNetHeadDim + 1, false), whole(b),
                                whole(b), whole(b), whole(b), whole(b), 1, true));
  EXPECT_FALSE(record_delta_net(*device, gpu.recorder(), shape(2, 3, 32, true), whole(b), whole(b), whole(b),
                                whole(b), whole(b), 1, true));
  static_cast<void>(gpu.recorder().discard());
}

}  // namespace
}  // namespace inferscope::vulkan
