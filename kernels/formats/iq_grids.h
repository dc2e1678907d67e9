// The codebooks of the i-quant weight types (GGUF-FORMATS.md 3.19; ggml's iq2xxs_grid,
// iq2xs_grid, iq2s_grid, iq3xxs_grid, iq3s_grid, iq1s_grid) and their sign rule. A grid point is a
// vector of 8 (IQ2_*, IQ1_*) or 4 (IQ3_*) coordinates, each one of a few levels; a grid is a set of
// points of that lattice, listed in lattice order: a point's code is sum_i level(i) * n_levels^i
// (level(i) the index of coordinate i's level), and entry e is the point of the e-th smallest
// code. iq_grids.cpp holds each set as a bitmap over the codes.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "kernels/formats/ggml_type.h"

namespace inferscope::kernels {

struct IqGrids {
  std::array<std::array<uint8_t, 8>, 256> iq2xxs;   // levels 8, 25, 43
  std::array<std::array<uint8_t, 8>, 512> iq2xs;    // levels 8, 25, 43
  std::array<std::array<uint8_t, 8>, 1024> iq2s;    // levels 8, 25, 43
  std::array<std::array<int8_t, 8>, 2048> iq1s;     // levels -1, 0, 1
  std::array<std::array<uint8_t, 4>, 256> iq3xxs;   // levels 4, 12, 20, 28, 36, 44, 52, 62
  std::array<std::array<uint8_t, 4>, 512> iq3s;     // levels 1, 3, 5, 7, 9, 11, 13, 15
};

// The types whose values are points of these grids (IQ4_XS's are IQ4_NL levels instead).
constexpr bool is_grid_iquant(GgmlType type) {
  switch (type) {
    case GgmlType::IQ1_S:
    case GgmlType::IQ1_M:
    case GgmlType::IQ2_XXS:
    case GgmlType::IQ2_XS:
    case GgmlType::IQ2_S:
    case GgmlType::IQ3_XXS:
    case GgmlType::IQ3_S: return true;
    default: return false;
  }
}

// The grids, built on first use (thread-safe).
const IqGrids& iq_grids();

// The grids as the words of iq_grid_layout.h (IQ_GRID_WORDS of them), for the GPU backends.
std::vector<uint32_t> iq_grid_words();

// The 8 signs of an IQ2/IQ3 group from its 7-bit index: bit j set means coordinate j is negative;
// bit 7 makes the count of negatives even (ggml's ksigns_iq2xs).
constexpr uint8_t iq_signs(uint32_t index7) {
  const uint32_t i = index7 & 127u;
  return static_cast<uint8_t>(i | ((__builtin_popcount(i) & 1u) << 7));
}

}  // namespace inferscope::kernels
