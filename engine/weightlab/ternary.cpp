#include "engine/weightlab/ternary.h"

#include <cmath>

#include "engine/core/thread_pool.h"
#include "engine/gguf/gguf_writer.h"
#include "kernels/cpu/quantize.h"

namespace inferscope {

void ternarize(float* x, int64_t n) {
  double abs_sum = 0;
  for (int64_t i = 0; i < n; ++i) abs_sum += std::fabs(x[i]);
  const double delta = 0.7 * abs_sum / static_cast<double>(std::max<int64_t>(1, n));
  int64_t nonzero = 0;
  for (int64_t i = 0; i < n; ++i) nonzero += std::fabs(x[i]) > delta ? 1 : 0;
  const float scale = nonzero ? static_cast<float>(abs_sum / static_cast<double>(nonzero)) : 0.0f;
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] > delta ? scale : (x[i] < -delta ? -scale : 0.0f);
}

bool TernaryRewriter::encode_rows(const std::string&, kernels::GgmlType to, float* rows, int64_t n, int64_t cols,
                                  uint8_t* out, ThreadPool& pool) const {
  // The ternary types, and Q4_0, their fallback for rows that are not a multiple of 256; the
  // tensors llama.cpp's rules give more bits (token_embd Q4_K, output Q6_K) keep their values.
  if (to != kernels::GgmlType::TQ1_0 && to != kernels::GgmlType::TQ2_0 && to != kernels::GgmlType::Q4_0) return false;
  const int64_t span = per_block_ && cols % 256 == 0 ? 256 : cols;
  const int64_t row_bytes = kernels::row_bytes(to, cols);
  pool.run([&](int ith, int nth) {
    for (int64_t r = ith; r < n; r += nth) {
      float* row = rows + r * cols;
      for (int64_t c = 0; c < cols; c += span) ternarize(row + c, span);
      kernels::quantize_row(to, row, out + r * row_bytes, cols);
    }
  });
  return true;
}

void TernaryRewriter::add_metadata(gguf::Writer& writer) const {
  writer.add_string("inferscope.weightlab.method", per_block_ ? "ternary per-block" : "ternary per-row");
}

}  // namespace inferscope
