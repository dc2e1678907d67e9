// LLM.int8() (Dettmers et al., 2022): the product of INT8 per-channel weights (int8_rows.h)
// with activations by mixed-precision decomposition. The feature columns whose magnitude
// exceeds `threshold` in any token of the batch are outliers: they are multiplied in F16, the
// activations rounded to F16 against F16 copies of the matching weight columns (scale * q);
// every other column goes through int8: each token's activations quantized to int8 with one
// scale per token (max |x| / 127 over its regular columns), int32 dot products with the int8
// weights, scaled by the token's and the row's scale. The two parts are summed.
//
// Usage: prepare the batch once, then threads split the rows:
//   LlmInt8Batch batch;  // reused: it only grows
//   prepare_llm_int8(x, k, n, threshold, batch);
//   llm_int8_rows(q, scales, k, batch, y, y_stride, r0, r1);
#pragma once

#include <cstdint>
#include <vector>

namespace inferscope::kernels {

struct LlmInt8Batch {
  int64_t k = 0, n = 0;
  std::vector<int8_t> xq;              // [n][k]: regular columns quantized, outlier columns 0
  std::vector<float> token_scale;      // [n]
  std::vector<int32_t> outliers;       // the outlier columns, ascending
  std::vector<float> x_outliers;       // [n][outliers.size()]: F16-rounded activations
  std::vector<uint8_t> is_outlier;     // [k]
};

// x: [n][k] floats. Finds the outlier columns and quantizes the rest.
void prepare_llm_int8(const float* x, int64_t k, int64_t n, float threshold, LlmInt8Batch& batch);

// y[t * y_stride + r] for rows [r0, r1) of the I8 matrix q ([rows][k]) with per-row `scales`.
void llm_int8_rows(const int8_t* q, const float* scales, const LlmInt8Batch& batch, float* y, int64_t y_stride,
                   int64_t r0, int64_t r1);

}  // namespace inferscope::kernels
