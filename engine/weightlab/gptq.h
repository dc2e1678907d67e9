// GPTQ (Frantar et al., 2022): quantizes a layer's weights column by column, each rounding error
// compensated on the columns not yet quantized through the Cholesky factor of the inverse of
// the layer Hessian H = 2/n X^T X (calibration.h, linalg.h), so that the layer's output on the
// calibration inputs changes least. Rows are independent given the factor, so a tensor is done
// in slabs of rows like plain quantization.
//
// The block grid is the target type's: at the first column of each block (32 elements, 256 for
// the K-quants) the type's own encoder sets the block's scales from the current, already
// compensated weights, and GPTQ then picks each element's integer on that grid (block_grid.h).
// With act-order the columns go by decreasing H diagonal, and every block's scales are set from
// the original weights first (the "static groups" of the reference implementation), since a
// block's columns are then no longer quantized together.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/core/status.h"
#include "kernels/formats/ggml_type.h"

namespace inferscope {

class ThreadPool;

struct GptqOptions {
  double damp = 0.01;        // added to H's diagonal: damp x the mean of the diagonal
  bool act_order = false;    // columns by decreasing H diagonal
  int64_t lazy_block = 128;  // columns whose updates to the later columns are applied at once
};

// Per Hessian (shared by the matrices of one input): the column order and the upper Cholesky
// factor U of the damped H^-1 in that order (U^T U = H^-1).
struct GptqFactor {
  int64_t cols = 0;
  std::vector<int64_t> order;  // order[j]: the original column quantized j-th
  std::vector<float> u;        // [cols][cols], in the permuted order
  std::vector<uint8_t> dead;   // per original column: no calibration input ever (weights zeroed)
};

Result<GptqFactor> gptq_factor(std::vector<float> h, int64_t cols, const GptqOptions& options, ThreadPool& pool);

// The target types GPTQ can place on their grid (kernels::has_block_grid).
bool gptq_supports(kernels::GgmlType type);

// Quantizes rows w[n][factor.cols] (overwritten by the compensated weights) to `type`, into
// out (n x row_bytes(type, cols)). Precondition: gptq_supports(type), cols a multiple of the
// type's block size, and of lazy_block's divisor or multiple (lazy_block 128 suits 32 and 256).
void gptq_quantize_rows(kernels::GgmlType type, const GptqFactor& factor, const GptqOptions& options, float* w,
                        int64_t n, uint8_t* out);

}  // namespace inferscope
