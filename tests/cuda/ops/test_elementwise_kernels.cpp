// kernels/cuda/elementwise against the CPU kernels (kernels/cpu/ops.h), on the emulator.
#include <gtest/gtest.h>

#include "kernels/cpu/ops.h"
#include "kernels/cuda/elementwise.h"
#include "tests/cuda/ops/device_buffer.h"
#include "tests/cuda/ops/kernel_check.h"

namespace inferscope::cuda_test {
namespace {

namespace ck = cuda_kernels;

// Odd widths (not a multiple of the block) and more rows than one.
constexpr int64_t kRows = 3, kWidth = 300;

TEST(CudaElementwise, RmsNormMatchesCpu) {
  auto x = random_values(kRows * kWidth, 1), w = random_values(kWidth, 2);
  DeviceBuffer<float> dx(x), dw(w), dy(x.size());
  ASSERT_EQ(ck::launch_rms_norm(dx.get(), dw.get(), dy.get(), kRows, kWidth, 1e-5f, nullptr), cudaSuccess);
  std::vector<float> want(x.size());
  for (int64_t r = 0; r < kRows; ++r) kernels::rms_norm(&x[r * kWidth], w.data(), &want[r * kWidth], kWidth, 1e-5f);
  EXPECT_LT(normalized_error(dy.read(), want), 1e-6);
}

TEST(CudaElementwise, LayerNormMatchesCpu) {
  auto x = random_values(kRows * kWidth, 3, 0.5f, 2.0f), w = random_values(kWidth, 4), b = random_values(kWidth, 5);
  DeviceBuffer<float> dx(x), dw(w), db(b);
  ASSERT_EQ(ck::launch_layer_norm(dx.get(), dw.get(), db.get(), dx.get(), kRows, kWidth, 1e-12f, nullptr), cudaSuccess);
  std::vector<float> want(x.size());
  for (int64_t r = 0; r < kRows; ++r) {
    kernels::layer_norm(&x[r * kWidth], w.data(), b.data(), &want[r * kWidth], kWidth, 1e-12f);
  }
  EXPECT_LT(normalized_error(dx.read(), want), 1e-5);
}

TEST(CudaElementwise, GatedUnitsMatchCpu) {
  const int64_t stride = kWidth + 20;  // rows wider than the width used
  for (const ck::Activation act :
       {ck::Activation::Silu, ck::Activation::GeluTanh, ck::Activation::SwigluOai, ck::Activation::Sigmoid}) {
    // up past the clamped SwiGLU's limit of 7 too
    auto g = random_values(kRows * stride, 6, -9, 9), u = random_values(kRows * stride, 7, -9, 9);
    DeviceBuffer<float> dg(g), du(u);
    ASSERT_EQ(ck::launch_glu(act, dg.get(), du.get(), kRows, kWidth, stride, nullptr), cudaSuccess);
    std::vector<float> want = g;
    for (int64_t r = 0; r < kRows; ++r) {
      if (act == ck::Activation::Silu) {
        kernels::swiglu(&want[r * stride], &u[r * stride], kWidth);
      } else if (act == ck::Activation::SwigluOai) {
        kernels::swiglu_oai(&want[r * stride], &u[r * stride], kWidth);
      } else if (act == ck::Activation::Sigmoid) {
        kernels::sigmoid_gate(&want[r * stride], &u[r * stride], kWidth);
      } else {
        kernels::geglu(&want[r * stride], &u[r * stride], kWidth);
      }
    }
    EXPECT_LT(normalized_error(dg.read(), want), 1e-6) << static_cast<int>(act);
  }
}

// gpt-oss's expert biases: each route's row gains its expert's bias row.
TEST(CudaElementwise, AddExpertBiasTakesEachRoutesExpertRow) {
  const int64_t n_expert = 5;
  auto y = random_values(kRows * kWidth, 11), bias = random_values(n_expert * kWidth, 12);
  std::vector<int32_t> ids(static_cast<size_t>(kRows));
  for (int64_t r = 0; r < kRows; ++r) ids[static_cast<size_t>(r)] = static_cast<int32_t>((r * 3 + 1) % n_expert);
  DeviceBuffer<float> dy(y), dbias(bias);
  DeviceBuffer<int32_t> dids(ids);
  ASSERT_EQ(ck::launch_add_expert_bias(dy.get(), dbias.get(), dids.get(), kRows, kWidth, nullptr), cudaSuccess);
  std::vector<float> want = y;
  for (int64_t r = 0; r < kRows; ++r) kernels::add(&want[r * kWidth], &bias[ids[static_cast<size_t>(r)] * kWidth], kWidth);
  EXPECT_EQ(dy.read(), want);
}

// Gemma 4's scales and its gate times one layer's slice of the per-layer inputs (CpuOps::scale
// and mul_columns): one F32 multiply each, so bit for bit.
TEST(CudaElementwise, ScaleAndMulColumnsAreExact) {
  const int64_t n = kRows * kWidth, slices = 3, stride = slices * kWidth, col0 = kWidth;  // the middle slice
  auto x = random_values(n, 13), gate = random_values(n, 14), inputs = random_values(kRows * stride, 15);
  DeviceBuffer<float> dx(x), dgate(gate), dinputs(inputs);
  ASSERT_EQ(ck::launch_scale(dx.get(), n, 0.0625f * 3.0f, nullptr), cudaSuccess);
  ASSERT_EQ(ck::launch_mul_columns(dgate.get(), dinputs.get() + col0, kRows, kWidth, stride, nullptr), cudaSuccess);
  std::vector<float> want_x = x, want_gate = gate;
  for (float& v : want_x) v *= 0.0625f * 3.0f;
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t i = 0; i < kWidth; ++i) want_gate[r * kWidth + i] *= inputs[r * stride + col0 + i];
  }
  EXPECT_EQ(dx.read(), want_x);
  EXPECT_EQ(dgate.read(), want_gate);
  EXPECT_EQ(dinputs.read(), inputs);
}

TEST(CudaElementwise, GeluAddBiasSoftcapMatchCpu) {
  const int64_t n = kRows * kWidth;
  auto x = random_values(n, 8, -3, 3), y = random_values(n, 9), bias = random_values(kWidth, 10);
  DeviceBuffer<float> dx(x), dy(y), dbias(bias);
  ASSERT_EQ(ck::launch_gelu(dx.get(), n, nullptr), cudaSuccess);
  ASSERT_EQ(ck::launch_add(dy.get(), dx.get(), n, nullptr), cudaSuccess);
  ASSERT_EQ(ck::launch_add_bias(dy.get(), dbias.get(), kRows, kWidth, nullptr), cudaSuccess);
  ASSERT_EQ(ck::launch_softcap(dy.get(), n, 2.5f, nullptr), cudaSuccess);
  std::vector<float> want_x = x, want_y = y;
  kernels::gelu(want_x.data(), n);
  kernels::add(want_y.data(), want_x.data(), n);
  for (int64_t r = 0; r < kRows; ++r) kernels::add(&want_y[r * kWidth], bias.data(), kWidth);
  kernels::softcap(want_y.data(), n, 2.5f);
  EXPECT_LT(normalized_error(dx.read(), want_x), 1e-6);
  EXPECT_LT(normalized_error(dy.read(), want_y), 1e-6);
}

}  // namespace
}  // namespace inferscope::cuda_test
