#include "kernels/cpu/matmul_dequantized.h"

#include <algorithm>

#include "kernels/cpu/dequantize.h"
#include "kernels/cpu/matmul_internal.h"

namespace inferscope::kernels::detail {

bool is_dequantized_weight(GgmlType w) {
  switch (w) {
    case GgmlType::NVFP4:
    case GgmlType::Q1_0:
    case GgmlType::Q2_0: return true;
    default: return false;
  }
}

// Panels of 16 rows: a multiple of the F32 kernels' tiles, 16 * k floats of scratch.
void matmul_dequantized(GgmlType w, const uint8_t* weights, int64_t k, const void* packed, int64_t n_tokens, float* y,
                        int64_t y_stride, int64_t row_begin, int64_t row_end, TokenBatching batching) {
  constexpr int64_t kPanelRows = 16;
  const int64_t rb = row_bytes(w, k);
  auto* panel = static_cast<float*>(thread_scratch(3, static_cast<size_t>(kPanelRows * k) * sizeof(float)));
  for (int64_t r0 = row_begin; r0 < row_end; r0 += kPanelRows) {
    const int64_t rows = std::min(kPanelRows, row_end - r0);
    for (int64_t i = 0; i < rows; ++i) dequantize_row(w, weights + (r0 + i) * rb, panel + i * k, k);
    matmul_rows(GgmlType::F32, panel, k, packed, n_tokens, y + r0, y_stride, 0, rows, batching);
  }
}

}  // namespace inferscope::kernels::detail
