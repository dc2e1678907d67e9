// What the CPU backend's kernels are on this machine, for the app's device picker and `bench`:
// the SIMD level the run-time dispatch chose (kernels/cpu/cpu_features), and the product kernel
// each weight type of a model runs for a prefill and for decode (kernels/cpu/matmul).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/model_weights.h"

namespace inferscope {

// "avx512", "avx2", "scalar".
std::string cpu_simd_level();

struct WeightKernels {
  std::string type;     // "q4_0"
  std::string prefill;  // the kernel of a product over the prompt's tokens
  std::string decode;   // of a product over one token
};

// One entry per weight type of `weights` that the CPU multiplies, in the order met.
std::vector<WeightKernels> cpu_weight_kernels(const ModelWeights& weights, int64_t prompt_tokens);

}  // namespace inferscope
