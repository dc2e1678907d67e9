// AWQ (Lin et al., 2023), the search: for the matrices that multiply one input (q, k, v; gate,
// up; down), a per-input-channel scale s = mean|x|^alpha (normalized so that max(s) min(s) = 1)
// over a grid of alpha in [0, 1], the one whose quantized layer Q(W diag(s)) diag(s)^-1 gives
// the least output error sum_t ||W x_t - Q(W diag(s)) (x_t / s)||^2 on calibration inputs. The
// scales are then folded into what produces the input (awq_rewriter.h), so nothing changes at
// run time. Alpha = 0 (s = 1) is plain rounding, so the chosen error is never above it.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/weightlab/calibration.h"
#include "kernels/formats/ggml_type.h"

namespace inferscope {

class ThreadPool;

struct AwqOptions {
  int grid = 20;             // alpha = 0, 1/grid, ..., 1
  int64_t max_rows = 256;    // rows of each matrix the search measures (evenly spaced)
  int64_t max_tokens = 128;  // calibration rows the search measures (evenly spaced)
};

// One matrix of a group: rows [n][cols] in F32 (a sample is enough) and its target type.
struct AwqMatrix {
  std::vector<float> rows;
  kernels::GgmlType type = kernels::GgmlType::Q4_0;
};

struct AwqChoice {
  double alpha = 0;
  std::vector<float> scales;  // [cols]: multiply the matrices' columns, divide the input
  double error = 0;           // output error at the chosen alpha
  double error_plain = 0;     // at alpha = 0 (round to nearest)
};

// Matrices whose type is not a block type are measured unquantized. Precondition: cols a
// multiple of every type's block size.
AwqChoice awq_search(const CalibrationInput& input, const std::vector<AwqMatrix>& matrices, const AwqOptions& options,
                     ThreadPool& pool);

// Every stride-th of n items, at most `max` of them.
std::vector<int64_t> evenly_spaced(int64_t n, int64_t max);

}  // namespace inferscope
