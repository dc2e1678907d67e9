#include "engine/backend/cpu/cpu_kernels.h"

#include <algorithm>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/matmul.h"

namespace inferscope {

std::string cpu_simd_level() { return kernels::simd_level_name(kernels::active_simd_level()); }

std::vector<WeightKernels> cpu_weight_kernels(const ModelWeights& weights, int64_t prompt_tokens) {
  std::vector<WeightKernels> out;
  std::vector<kernels::GgmlType> seen;
  weights.for_each_matrix([&](const WeightMatrix& w) {
    if (std::find(seen.begin(), seen.end(), w.type) != seen.end() || !kernels::matmul_supported(w.type)) return;
    seen.push_back(w.type);
    out.push_back({kernels::type_name(w.type), kernels::matmul_kernel_name(w.type, w.cols, prompt_tokens),
                   kernels::matmul_kernel_name(w.type, w.cols, 1)});
  });
  return out;
}

}  // namespace inferscope
