#include "kernels/cpu/llm_int8.h"

#include <algorithm>
#include <cmath>

#include "kernels/formats/fp16.h"

namespace inferscope::kernels {
namespace {

// sum_j a[j] * b[j] over int8 values (the compiler widens and vectorizes it).
int32_t dot_i8(const int8_t* a, const int8_t* b, int64_t k) {
  int32_t sum = 0;
  for (int64_t j = 0; j < k; ++j) sum += static_cast<int32_t>(a[j]) * static_cast<int32_t>(b[j]);
  return sum;
}

}  // namespace

void prepare_llm_int8(const float* x, int64_t k, int64_t n, float threshold, LlmInt8Batch& batch) {
  batch.k = k;
  batch.n = n;
  batch.outliers.clear();
  for (int64_t j = 0; j < k; ++j) {
    for (int64_t t = 0; t < n; ++t) {
      if (std::fabs(x[t * k + j]) > threshold) {
        batch.outliers.push_back(static_cast<int32_t>(j));
        break;
      }
    }
  }
  const size_t n_out = batch.outliers.size();
  batch.xq.assign(static_cast<size_t>(n * k), 0);
  batch.token_scale.assign(static_cast<size_t>(n), 0.0f);
  batch.x_outliers.assign(static_cast<size_t>(n) * n_out, 0.0f);
  std::vector<uint8_t>& is_outlier = batch.is_outlier;
  is_outlier.assign(static_cast<size_t>(k), 0);
  for (int32_t j : batch.outliers) is_outlier[static_cast<size_t>(j)] = 1;
  for (int64_t t = 0; t < n; ++t) {
    const float* xt = x + t * k;
    float amax = 0.0f;
    for (int64_t j = 0; j < k; ++j) {
      if (!is_outlier[static_cast<size_t>(j)]) amax = std::fmax(amax, std::fabs(xt[j]));
    }
    const float scale = amax / 127.0f;
    const float inv = scale > 0.0f ? 1.0f / scale : 0.0f;
    batch.token_scale[static_cast<size_t>(t)] = scale;
    int8_t* q = batch.xq.data() + t * k;
    for (int64_t j = 0; j < k; ++j) {
      if (!is_outlier[static_cast<size_t>(j)]) q[j] = static_cast<int8_t>(std::lround(xt[j] * inv));
    }
    for (size_t o = 0; o < n_out; ++o) {
      batch.x_outliers[static_cast<size_t>(t) * n_out + o] = round_to_fp16(xt[batch.outliers[o]]);
    }
  }
}

void llm_int8_rows(const int8_t* q, const float* scales, const LlmInt8Batch& batch, float* y, int64_t y_stride,
                   int64_t r0, int64_t r1) {
  const int64_t k = batch.k;
  const size_t n_out = batch.outliers.size();
  thread_local std::vector<float> w_out;  // the row's F16 copies of the outlier columns
  w_out.resize(n_out);
  for (int64_t r = r0; r < r1; ++r) {
    const int8_t* row = q + r * k;
    for (size_t o = 0; o < n_out; ++o) {
      w_out[o] = round_to_fp16(scales[r] * static_cast<float>(row[batch.outliers[o]]));
    }
    for (int64_t t = 0; t < batch.n; ++t) {
      const float regular = static_cast<float>(dot_i8(row, batch.xq.data() + t * k, k)) *
                            (batch.token_scale[static_cast<size_t>(t)] * scales[r]);
      float outlier = 0.0f;
      const float* xo = batch.x_outliers.data() + static_cast<size_t>(t) * n_out;
      for (size_t o = 0; o < n_out; ++o) outlier += w_out[o] * xo[o];
      y[t * y_stride + r] = regular + outlier;
    }
  }
}

}  // namespace inferscope::kernels
