// Internal to the i-quant decode kernels (matmul_iquant_avx2.cpp, matmul_iquant_avx512.cpp): what
// both read an i-quant super-block with, and the loop over rows, tokens and super-blocks. Each
// kernel reads a unit of one (AVX2) or two (AVX-512) groups of 32 values straight into registers,
// in the form of a u8 x s8 product with sign-adjusted Q8_K activations:
//   v[e] = sign[e] * mag[e],   x[e] = unit * scale[e / 16] * v[e]
// the same integers as iquant_blocks.h (same v, scale and unit), so a product is exact in int32
// until the one multiplication by unit * da per super-block.
//   IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S (kSignBits): mag the grid bytes (at most 62), the
//     signs one bit per value (bit e set: v[e] < 0), stored or from a 7-bit index (iq_signs).
//   IQ1_S, IQ1_M (v = 8 * coordinate +- 1, |v| <= 9), IQ4_XS (the IQ4_NL levels, |v| <= 127):
//     v itself, mag = |v|.
// |mag| <= 127 keeps vpmaddubsw's pair sums (at most 2 * 127 * 127) clear of int16 saturation.
//
// Included by files built with AVX2/AVX-512 flags: only internal-linkage helpers here.
#pragma once

#include <immintrin.h>

#include <array>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/iquant_blocks.h"
#include "kernels/cpu/matmul_kquant.h"
#include "kernels/formats/ggml_type.h"
#include "kernels/formats/iq_grids.h"

namespace inferscope::kernels::detail {

template <GgmlType T>
constexpr bool kSignBits = T == GgmlType::IQ2_XXS || T == GgmlType::IQ2_XS || T == GgmlType::IQ2_S ||
                           T == GgmlType::IQ3_XXS || T == GgmlType::IQ3_S;

// The grids as bytes: entry i of an 8-coordinate grid at 8 i, of a 4-coordinate grid at 4 i.
struct IqGridBytes {
  const uint8_t* iq2xxs;
  const uint8_t* iq2xs;
  const uint8_t* iq2s;
  const uint8_t* iq3xxs;
  const uint8_t* iq3s;
  const int8_t* iq1s;
};

static inline IqGridBytes iq_grid_bytes() {
  const IqGrids& g = iq_grids();
  return {g.iq2xxs[0].data(), g.iq2xs[0].data(), g.iq2s[0].data(),
          g.iq3xxs[0].data(), g.iq3s[0].data(), g.iq1s[0].data()};
}

// iq_signs of every 7-bit index.
inline constexpr std::array<uint8_t, 128> kIqSignBytes = [] {
  std::array<uint8_t, 128> t{};
  for (uint32_t i = 0; i < 128; ++i) t[i] = iq_signs(i);
  return t;
}();

static inline uint32_t iqg_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

static inline int64_t iqg_u64(const uint8_t* p) {
  int64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Signs of four 8-value points from their 7-bit indices (bits 7 l .. 7 l + 6 of `word`).
static inline uint32_t seven_bit_signs(uint32_t word) {
  return kIqSignBytes[word & 127] | (kIqSignBytes[(word >> 7) & 127] << 8) |
         (kIqSignBytes[(word >> 14) & 127] << 16) | (static_cast<uint32_t>(kIqSignBytes[(word >> 21) & 127]) << 24);
}

// Rows [r0, r0 + R) of a product with tokens [t0, t0 + NT): each super-block's weights are read
// once for the NT tokens, and the R rows give independent chains of integer accumulations. The
// ISA policy reads what a super-block's units share once (Isa::head<T>(blk), an Isa::Head) and
// a unit of Isa::kGroups groups (32 * kGroups values): Isa::read<T>(blk, head, u, grids);
// Isa::accumulate<T>(acc, unit, q) adds its scaled product with the activation bytes at
// q to the int32 lanes of acc (at most 8 * 2 * 2 * 127 * 127 * 32 in a lane per super-block);
// Isa::Int / Isa::Float are its vectors. A (row, token)'s arithmetic does not depend on R or NT
// (batch invariance).
template <GgmlType T, int R, int NT, class Isa>
static inline void iq_decode_tile(const MatmulArgs& a, int64_t r0, int64_t t0, const IqGridBytes& grids) {
  using Int = typename Isa::Int;
  using Float = typename Isa::Float;
  constexpr int kUnits = 8 / Isa::kGroups;
  const Q8KLayout l = q8k_layout(a.k);
  const int64_t block_bytes = a.row_bytes / l.n_blocks;
  const uint8_t* acts[NT];
  const float* da[NT];
  for (int t = 0; t < NT; ++t) {
    acts[t] = a.packed + (t0 + t) * l.row_stride;
    da[t] = reinterpret_cast<const float*>(acts[t] + l.d_offset);
  }
  Float acc[R][NT];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NT; ++t) acc[r][t] = Isa::zero_float();
  for (int64_t b = 0; b < l.n_blocks; ++b) {
    const uint8_t* blk[R];
    typename Isa::Head head[R];
    for (int r = 0; r < R; ++r) {
      blk[r] = a.w + (r0 + r) * a.row_bytes + b * block_bytes;
      _mm_prefetch(reinterpret_cast<const char*>(blk[r] + 8 * block_bytes), _MM_HINT_T0);
      head[r] = Isa::template head<T>(blk[r]);
    }
    Int isum[R][NT];
    for (int r = 0; r < R; ++r)
      for (int t = 0; t < NT; ++t) isum[r][t] = Isa::zero_int();
    for (int u = 0; u < kUnits; ++u) {
      typename Isa::Unit w[R];
      for (int r = 0; r < R; ++r) w[r] = Isa::template read<T>(blk[r], head[r], u, grids);
      for (int t = 0; t < NT; ++t) {
        const uint8_t* q = acts[t] + b * kSuperBlock + 32 * Isa::kGroups * u;
        for (int r = 0; r < R; ++r) isum[r][t] = Isa::template accumulate<T>(isum[r][t], w[r], q);
      }
    }
    for (int r = 0; r < R; ++r) {
      const float unit = iq_unit<T>(blk[r]);
      for (int t = 0; t < NT; ++t) acc[r][t] = Isa::scale_add(isum[r][t], unit * da[t][b], acc[r][t]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NT; ++t) a.y[(t0 + t) * a.y_stride + r0 + r] = Isa::hsum(acc[r][t]);
}

// Tokens [t0, t0 + NT) of every row, two rows at a time.
template <GgmlType T, int NT, class Isa>
static inline void iq_decode_rows(const MatmulArgs& a, int64_t t0, const IqGridBytes& grids) {
  int64_t r = a.row_begin;
  for (; r + 2 <= a.row_end; r += 2) iq_decode_tile<T, 2, NT, Isa>(a, r, t0, grids);
  if (r < a.row_end) iq_decode_tile<T, 1, NT, Isa>(a, r, t0, grids);
}

// Every row and token of `a`, up to 3 tokens at a time.
template <GgmlType T, class Isa>
static inline void iq_decode(const MatmulArgs& a) {
  const IqGridBytes grids = iq_grid_bytes();
  int64_t t = 0;
  for (; t + 3 <= a.n_tokens; t += 3) iq_decode_rows<T, 3, Isa>(a, t, grids);
  if (a.n_tokens - t == 2) iq_decode_rows<T, 2, Isa>(a, t, grids);
  if (a.n_tokens - t == 1) iq_decode_rows<T, 1, Isa>(a, t, grids);
}

// iq_decode for the type of `a` (an is_iq_block_type type).
template <class Isa>
static inline void iq_decode_any(const MatmulArgs& a) {
  switch (a.type) {
    case GgmlType::IQ1_S: iq_decode<GgmlType::IQ1_S, Isa>(a); break;
    case GgmlType::IQ1_M: iq_decode<GgmlType::IQ1_M, Isa>(a); break;
    case GgmlType::IQ2_XXS: iq_decode<GgmlType::IQ2_XXS, Isa>(a); break;
    case GgmlType::IQ2_XS: iq_decode<GgmlType::IQ2_XS, Isa>(a); break;
    case GgmlType::IQ2_S: iq_decode<GgmlType::IQ2_S, Isa>(a); break;
    case GgmlType::IQ3_XXS: iq_decode<GgmlType::IQ3_XXS, Isa>(a); break;
    case GgmlType::IQ3_S: iq_decode<GgmlType::IQ3_S, Isa>(a); break;
    case GgmlType::IQ4_XS: iq_decode<GgmlType::IQ4_XS, Isa>(a); break;
    default: break;
  }
}

}  // namespace inferscope::kernels::detail
