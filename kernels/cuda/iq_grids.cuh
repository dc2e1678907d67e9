// The i-quant grids on the device: kernels/formats/iq_grid_layout.h's words as a constant array
// of each module that decodes the grid types (generated at build time from the CPU kernels'
// tables: kernels/cuda/tools/iq_grid_words_inc.cpp), read through the L1 cache like weights.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/formats/iq_grid_layout.h"

namespace inferscope::cuda_kernels {

static __device__ const uint32_t kIqGridWords[IQ_GRID_WORDS] = {
#include "iq_grid_words.inc"
};

}  // namespace inferscope::cuda_kernels
