// Helpers of the Vulkan op tests (test_vk_ops.cpp, test_vk_attention.cpp, test_vk_matmul.cpp,
// test_vk_quantize.cpp): NMSE thresholds and the comparison itself, the scalar CPU references,
// workgroup-size and shader-variant overrides. The thresholds
// are explained at the top of test_vk_ops.cpp.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "engine/backend/vulkan/ops/vk_op_util.h"
#include "engine/backend/vulkan/ops/vk_quantize.h"
#include "engine/backend/vulkan/vk_buffer.h"
#include "kernels/cpu/cpu_features.h"
#include "tests/support/vulkan_gpu.h"

namespace inferscope::vulkan::op_tests {

inline constexpr double kNmseReduction = 1e-11;
inline constexpr double kNmseTanh = 1e-11;
inline constexpr double kNmseRope = 1e-11;
inline constexpr double kNmseRopeFar = 1e-9;
inline constexpr double kNmseAttention = 1e-6;
inline constexpr double kNmseAttentionDouble = 1e-10;

// The CPU references run their scalar loops (the SIMD ones are checked against those in
// tests/kernels); the previous level comes back at scope exit.
class ScalarCpu {
 public:
  ScalarCpu() : saved_(kernels::active_simd_level()) { kernels::set_simd_level(kernels::SimdLevel::Scalar); }
  ~ScalarCpu() { kernels::set_simd_level(saved_); }

 private:
  kernels::SimdLevel saved_;
};

// v after `pad` floats of -7 (operands that start inside their buffers).
inline std::vector<float> padded(const std::vector<float>& v, int64_t pad) {
  std::vector<float> p(static_cast<size_t>(pad), -7.0f);
  p.insert(p.end(), v.begin(), v.end());
  return p;
}

// The portable variants of the int8 shaders (vk_quantize.h) for the scope when `on` (the native
// ones run where the device has their features, as lavapipe does).
class PortableInt8 {
 public:
  explicit PortableInt8(bool on = true) {
    if (on) set_int8_native_override(0);
  }
  ~PortableInt8() { set_int8_native_override(-1); }
};

// Forces every op's workgroup size for the scope (0: each op's own choice).
class WorkgroupSize {
 public:
  explicit WorkgroupSize(uint32_t size) { set_op_workgroup_override(size); }
  ~WorkgroupSize() { set_op_workgroup_override(0); }
};

inline std::vector<float> random_floats(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// INFERSCOPE_PRINT_NMSE=1 prints every comparison (to see the margins under the thresholds).
inline double nmse(const std::vector<float>& got, const std::vector<float>& want) {
  EXPECT_EQ(got.size(), want.size());
  double err = 0.0, ref = 0.0;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    const double d = static_cast<double>(got[i]) - want[i];
    err += d * d;
    ref += static_cast<double>(want[i]) * want[i];
  }
  const double result = err / std::max(ref, 1e-30);
  static const bool print = std::getenv("INFERSCOPE_PRINT_NMSE") != nullptr;
  if (print) std::fprintf(stderr, "    nmse %.3g over %zu values\n", result, want.size());
  return result;
}

// Index of the first element whose bits differ, or -1.
template <class T>
inline int64_t first_bit_difference(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) return static_cast<int64_t>(i);
  }
  return -1;
}

using inferscope::testing::Gpu;

inline BufferSpan whole(const Buffer& b) { return BufferSpan::whole(b); }


}  // namespace inferscope::vulkan::op_tests
