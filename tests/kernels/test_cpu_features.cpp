// Feature detection is self-consistent and the dispatch level can be forced down and restored.
#include "kernels/cpu/cpu_features.h"

#include <gtest/gtest.h>

namespace inferscope::kernels {
namespace {

TEST(CpuFeatures, LevelFollowsFeatures) {
  const CpuFeatures& f = cpu_features();
  const SimdLevel level = detected_simd_level();
  if (level >= SimdLevel::Avx2) {
    EXPECT_TRUE(f.avx2 && f.fma && f.f16c);
  }
  if (level >= SimdLevel::Avx512) {
    EXPECT_TRUE(f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq && f.avx512vnni);
  }
  if (level >= SimdLevel::Amx) {
    EXPECT_TRUE(f.amx_tile && f.amx_int8 && f.amx_bf16 && f.avx512bf16);
  }
  if (f.avx512f) {
    EXPECT_TRUE(f.avx2);
  }
  EXPECT_STRNE(simd_level_name(level), "?");
#if defined(__x86_64__)
  EXPECT_EQ(static_cast<bool>(__builtin_cpu_supports("avx2")), f.avx2);
  EXPECT_EQ(static_cast<bool>(__builtin_cpu_supports("avx512f")), f.avx512f);
#endif
}

TEST(CpuFeatures, ForcedLevelIsClamped) {
  const SimdLevel detected = detected_simd_level();
  set_simd_level(SimdLevel::Scalar);
  EXPECT_EQ(active_simd_level(), SimdLevel::Scalar);
  set_simd_level(SimdLevel::Amx);
  EXPECT_EQ(active_simd_level(), detected);
  set_simd_level(detected);
}

}  // namespace
}  // namespace inferscope::kernels
