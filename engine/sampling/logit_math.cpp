// Whole-vocabulary passes. Written as fixed-width lane loops (no reassociation needed, so the
// compiler vectorises them under strict IEEE semantics and every build adds in the same order);
// on x86-64 Linux GCC/Clang also emit an AVX2 clone picked at load time.
#include "engine/sampling/logit_math.h"

#include <algorithm>
#include <cmath>

#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#define INFERSCOPE_AVX2_CLONE __attribute__((target_clones("avx2", "default")))
#else
#define INFERSCOPE_AVX2_CLONE
#endif

namespace inferscope {

INFERSCOPE_AVX2_CLONE float max_logit(std::span<const float> logits) {
  // A select per lane; NaN never compares greater, so it is skipped like -inf.
  constexpr size_t kLanes = 16;
  const float* x = logits.data();
  const size_t n = logits.size();
  float lane_max[kLanes];
  std::fill(lane_max, lane_max + kLanes, -std::numeric_limits<float>::infinity());
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (size_t j = 0; j < kLanes; ++j) lane_max[j] = x[i + j] > lane_max[j] ? x[i + j] : lane_max[j];
  float result = -std::numeric_limits<float>::infinity();
  for (; i < n; ++i) result = x[i] > result ? x[i] : result;
  for (const float m : lane_max) result = m > result ? m : result;
  return sanitize_logit(result);
}

INFERSCOPE_AVX2_CLONE double sum_exp(std::span<const float> logits, float shift) {
  // Float lanes over blocks of 64, each block's total added in double: float's 24 bits would
  // lose ~1e-5 over 152k terms.
  constexpr size_t kLanes = 16, kBlock = 64;
  const float* x = logits.data();
  const size_t n = logits.size();
  double total = 0.0;
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    float lane_sum[kLanes] = {};
    for (size_t k = 0; k < kBlock; k += kLanes)
      for (size_t j = 0; j < kLanes; ++j) lane_sum[j] += exp_nonpositive(x[i + k + j] - shift);
    float block = 0.0f;
    for (const float s : lane_sum) block += s;
    total += block;
  }
  for (; i < n; ++i) total += exp_nonpositive(x[i] - shift);
  return total;
}

INFERSCOPE_AVX2_CLONE double sum_floats(std::span<const float> values) {
  constexpr size_t kLanes = 8;
  const float* x = values.data();
  const size_t n = values.size();
  double lane_sum[kLanes] = {};
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (size_t j = 0; j < kLanes; ++j) lane_sum[j] += static_cast<double>(x[i + j]);
  double total = 0.0;
  for (const double s : lane_sum) total += s;
  for (; i < n; ++i) total += static_cast<double>(x[i]);
  return total;
}

double log_sum_exp(std::span<const float> logits) {
  const float max = max_logit(logits);
  if (max == -std::numeric_limits<float>::infinity()) return max;
  return static_cast<double>(max) + std::log(sum_exp(logits, max));
}

}  // namespace inferscope
