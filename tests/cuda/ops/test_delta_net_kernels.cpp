// The Gated DeltaNet kernels (kernels/cuda/delta_net.h) on the CUDA emulator against the CPU
// kernels (kernels/cpu/delta_net.h), over a chunk whose rows belong to two slots, interleaved:
// spans going on from their slot's state, a second span of a slot after another slot's, and a
// sequence starting at position 0 over a state holding something else; the states after the
// chunk's first rows kept as a verification keeps them (RowStates). Errors: the sums in
// another order (~1e-6 of the values' scale; a wrong state, head or sign gives ~1e-1).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/cpu/delta_net.h"
#include "kernels/cuda/delta_net.h"
#include "tests/cuda/ops/device_buffer.h"
#include "tests/cuda/ops/kernel_check.h"

namespace inferscope::cuda_test {
namespace {

namespace ck = cuda_kernels;

constexpr double kTolerance = 1e-5;

// Slot and position of each row: slot 1 goes on, slot 0 starts, slot 1 again, slot 0 again.
const std::vector<int32_t> kSlots = {1, 1, 1, 0, 0, 1, 0};
const std::vector<int32_t> kPos = {5, 6, 7, 0, 1, 8, 2};
constexpr int kStates = 2;
constexpr int kKept = 3;  // row states after the states of the slots

struct Rows {
  DeviceBuffer<int32_t> pos{kPos}, slot{kSlots};
  ck::ChunkRows rows() const { return {pos.get(), nullptr, nullptr, nullptr, slot.get()}; }
};

// The CPU's state of row `row`'s slot (its first `used` floats zeroed at position 0).
float* state_of(std::vector<float>& states, int64_t per_state, int64_t used, size_t row) {
  float* s = states.data() + kSlots[row] * per_state;
  if (kPos[row] == 0) std::fill_n(s, used, 0.0f);
  return s;
}

void check_ssm_conv(int64_t channels, int64_t taps, uint32_t seed) {
  SCOPED_TRACE("ssm_conv channels=" + std::to_string(channels) + " taps=" + std::to_string(taps));
  const auto n = static_cast<int64_t>(kSlots.size());
  const int64_t per_state = (taps - 1) * channels + 3;  // states farther apart than their conv part
  const std::vector<float> x = random_values(static_cast<size_t>(n * channels), seed);
  const std::vector<float> kernel = random_values(static_cast<size_t>(channels * taps), seed + 1);
  const std::vector<float> states = random_values(static_cast<size_t>((kStates + kKept) * per_state), seed + 2);
  std::vector<float> want = x, want_states = states;
  for (size_t t = 0; t < kSlots.size(); ++t) {
    float* state = state_of(want_states, per_state, (taps - 1) * channels, t);
    kernels::causal_conv_silu(want.data() + t * channels, 1, channels, kernel.data(), taps, state, 0, channels);
    if (t < kKept) std::copy_n(state, (taps - 1) * channels, want_states.data() + (kStates + t) * per_state);
  }
  DeviceBuffer<float> dx(x), dk(kernel), ds(states);
  const Rows rows;
  const ck::RowStates kept{ds.get() + kStates * per_state, kKept};
  ASSERT_EQ(ck::launch_ssm_conv(dx.get(), dk.get(), ds.get(), per_state, rows.rows(), n, channels, taps, kept, nullptr),
            cudaSuccess);
  EXPECT_LT(normalized_error(dx.read(), want), kTolerance);
  EXPECT_LT(normalized_error(ds.read(), want_states), kTolerance);
}

void check_delta_net(ck::DeltaNetHeads heads, uint32_t seed) {
  SCOPED_TRACE("delta_net heads " + std::to_string(heads.n_k_heads) + "/" + std::to_string(heads.n_v_heads) + " of " +
               std::to_string(heads.head_dim) + (heads.grouped ? " grouped" : ""));
  const auto n = static_cast<int64_t>(kSlots.size());
  const int64_t d = heads.head_dim, H = heads.n_v_heads, key_dim = heads.n_k_heads * d;
  const int64_t C = 2 * key_dim + H * d, per_state = H * d * d + 5;
  constexpr float kEps = 1e-6f;
  const std::vector<float> conv = random_values(static_cast<size_t>(n * C), seed);
  const std::vector<float> alpha = random_values(static_cast<size_t>(n * H), seed + 1);
  const std::vector<float> beta = random_values(static_cast<size_t>(n * H), seed + 2, -3.0f, 3.0f);
  const std::vector<float> dt = random_values(static_cast<size_t>(H), seed + 3);
  const std::vector<float> a = random_values(static_cast<size_t>(H), seed + 4, -2.0f, -0.1f);
  const std::vector<float> states =
      random_values(static_cast<size_t>((kStates + kKept) * per_state), seed + 5, -0.1f, 0.1f);

  std::vector<float> q = conv, g = alpha, b = beta;
  kernels::delta_net_prepare(q.data(), q.data() + key_dim, C, heads.n_k_heads, d, g.data(), b.data(), H, dt.data(),
                             a.data(), n, kEps);
  std::vector<float> want(static_cast<size_t>(n * H * d)), want_states = states;
  for (size_t t = 0; t < kSlots.size(); ++t) {
    float* state = state_of(want_states, per_state, H * d * d, t);
    for (int64_t h = 0; h < H; ++h) {
      const int64_t kh = heads.grouped ? h / (H / heads.n_k_heads) : h % heads.n_k_heads;
      const float* row = q.data() + t * C;
      const kernels::DeltaNetHeadRows r{row + kh * d, row + key_dim + kh * d, row + 2 * key_dim + h * d, C,
                                        g.data() + t * H + h, b.data() + t * H + h, H,
                                        want.data() + t * H * d + h * d, H * d};
      kernels::delta_net_steps(r, 1, d, state + h * d * d);
    }
    if (t < kKept) std::copy_n(state, H * d * d, want_states.data() + (kStates + t) * per_state);
  }

  DeviceBuffer<float> dc(conv), da(alpha), db(beta), ddt(dt), dA(a), ds(states), dout(want.size());
  const Rows rows;
  ASSERT_EQ(ck::launch_delta_net_prepare(dc.get(), da.get(), db.get(), ddt.get(), dA.get(), heads, n, kEps, nullptr),
            cudaSuccess);
  const ck::RowStates kept{ds.get() + kStates * per_state, kKept};
  ASSERT_EQ(ck::launch_delta_net(dc.get(), da.get(), db.get(), dout.get(), ds.get(), per_state, rows.rows(), heads, n,
                                 kept, nullptr),
            cudaSuccess);
  EXPECT_LT(normalized_error(dc.read(), q), kTolerance) << "prepared q, k";
  EXPECT_LT(normalized_error(da.read(), g), kTolerance) << "decays";
  EXPECT_LT(normalized_error(db.read(), b), kTolerance) << "updates";
  EXPECT_LT(normalized_error(dout.read(), want), kTolerance) << "outputs";
  EXPECT_LT(normalized_error(ds.read(), want_states), kTolerance) << "states";
}

TEST(CudaDeltaNetKernels, ConvolutionMatchesTheCpuOverInterleavedSlots) {
  check_ssm_conv(256, 4, 10);
  check_ssm_conv(333, 2, 11);
  check_ssm_conv(70, 8, 12);
}

TEST(CudaDeltaNetKernels, RecurrenceMatchesTheCpuOverInterleavedSlots) {
  check_delta_net({2, 4, 32, false}, 20);
  check_delta_net({2, 6, 64, true}, 21);
  check_delta_net({1, 2, 48, true}, 22);
  check_delta_net({1, 1, 256, false}, 23);
}

TEST(CudaDeltaNetKernels, RefuseWhatTheyCannotHold) {
  const Rows rows;
  EXPECT_EQ(ck::launch_ssm_conv(nullptr, nullptr, nullptr, 0, rows.rows(), 1, 8, ck::kMaxConvTaps + 1, {}, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(ck::launch_delta_net(nullptr, nullptr, nullptr, nullptr, nullptr, 0, rows.rows(),
                                 {1, 1, ck::kMaxDeltaNetHeadDim + 1, false}, 1, {}, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(ck::launch_delta_net(nullptr, nullptr, nullptr, nullptr, nullptr, 0, rows.rows(), {2, 3, 32, true}, 1,
                                 {}, nullptr),
            cudaErrorInvalidValue);
  cudaGetLastError();
}

}  // namespace
}  // namespace inferscope::cuda_test
