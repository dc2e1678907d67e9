// Iterating the SIMD levels of this machine in kernel tests.
#pragma once

#include <vector>

#include "kernels/cpu/cpu_features.h"

namespace inferscope::testing {

// Restores the detected level when a test ends.
struct SimdLevelGuard {
  ~SimdLevelGuard() { kernels::set_simd_level(kernels::detected_simd_level()); }
};

// The vector levels (AVX2 and up) this CPU has, lowest first.
inline std::vector<kernels::SimdLevel> vector_simd_levels() {
  using kernels::SimdLevel;
  std::vector<SimdLevel> levels;
  for (SimdLevel l : {SimdLevel::Avx2, SimdLevel::Avx512, SimdLevel::Amx}) {
    if (static_cast<int>(l) <= static_cast<int>(kernels::detected_simd_level())) levels.push_back(l);
  }
  return levels;
}

}  // namespace inferscope::testing
