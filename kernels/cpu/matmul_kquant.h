// Internal to the matmul kernels: products of the 256-element super-block weight types (Q2_K,
// Q3_K, Q4_K, Q5_K, Q6_K, TQ1_0, TQ2_0, and the i-quants IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S,
// IQ3_XXS, IQ3_S, IQ4_XS) with activations quantized like llama.cpp's Q8_K.
//
// Every weight super-block is brought to one "unpacked" form (u, sc, mn, d, dmin) with
//   W[e] = d * sc[e / 16] * u[e] - dmin * mn[e / 16]              (min types: Q2_K, Q4_K, Q5_K)
//   W[e] = d * (sc[e / 16] * u[e] - mn[e / 16])                  (offset types: the others)
// where u are unsigned small integers (the operand of u8 x s8 products) and sc, mn int16. With
// activations a = da * qa, the block's contribution to a dot product is
//   da * (d * sum_s sc[s] * dot_s(u, qa) - dmin * sum_s mn[s] * bsum_s)    (min types)
//   da * d * (sum_s sc[s] * dot_s(u, qa) - sum_s mn[s] * bsum_s)           (offset types)
// over the 16 sub-blocks s of 16 elements; bsum_s = sum of qa over sub-block s. The offset
// types keep the whole bracket in int32 (|.| < 2^31 for every layout), so no cancellation
// happens in floating point.
//
// Included by files built with AVX2/AVX-512 flags: only declarations and internal-linkage
// helpers here.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/matmul_internal.h"
#include "kernels/formats/ggml_type.h"
#include "kernels/formats/iq_grids.h"

namespace inferscope::kernels::detail {

constexpr int64_t kSuperBlock = 256;  // elements per K-quant / ternary super-block

constexpr bool is_q8k_weight(GgmlType w) {
  switch (w) {
    case GgmlType::Q2_K:
    case GgmlType::Q3_K:
    case GgmlType::Q4_K:
    case GgmlType::Q5_K:
    case GgmlType::Q6_K:
    case GgmlType::TQ1_0:
    case GgmlType::TQ2_0:
    case GgmlType::IQ4_XS: return true;
    default: return is_grid_iquant(w);
  }
}

// Types whose panels the SIMD kernels fill with unpack_block_scalar: TQ1_0's base-3 digits and
// the i-quants (iquant_blocks.h: u is the signed value plus the type's largest level, sc the
// group's scale, mn = sc times that offset). u is at most 124 (u8 x s8 pairs stay within int16)
// except for IQ4_XS (254: AVX-512 panels only, whose vpdpbusd does not saturate). The i-quants'
// few-token products read groups in registers instead (matmul_iquant_*.cpp).
constexpr bool is_scalar_unpacked(GgmlType w) {
  return w == GgmlType::TQ1_0 || (is_q8k_weight(w) && w != GgmlType::Q2_K && w != GgmlType::Q3_K &&
                                  w != GgmlType::Q4_K && w != GgmlType::Q5_K && w != GgmlType::Q6_K &&
                                  w != GgmlType::TQ2_0);
}

// Min types subtract dmin * mn * bsum in floating point; offset types fold mn into the integer.
static inline bool has_float_min(GgmlType w) {
  return w == GgmlType::Q2_K || w == GgmlType::Q4_K || w == GgmlType::Q5_K;
}

// Packed Q8_K activations, one row per token, each row 64-byte aligned relative to the buffer:
//   int8_t  qs[round_up(k, 64)]   values (GGUF-FORMATS.md 3.14 rule, round half to even)
//   float   d[k / 256]            super-block scales (may be negative)
//   int16_t bsums[k / 16]         sums of qs over each 16 values
struct Q8KLayout {
  int64_t n_blocks;
  int64_t d_offset;
  int64_t bsums_offset;
  int64_t row_stride;
};

static inline Q8KLayout q8k_layout(int64_t k) {
  Q8KLayout l;
  l.n_blocks = k / kSuperBlock;
  l.d_offset = round_up(k, 64);
  l.bsums_offset = l.d_offset + round_up(4 * l.n_blocks, 32);
  l.row_stride = round_up(l.bsums_offset + 2 * (k / 16), 64);
  return l;
}

// One weight super-block in the unpacked form above, laid out for the SIMD kernels
// (64-byte aligned, 576 bytes):
//   u[e]          element e (0..255)
//   sc_pairs[i]   sc of the element pair (2i, 2i+1), i.e. sc[i / 8]: the int16 multiplier of
//                 lane i of a u8 x s8 pairwise product (pmaddubsw) over the 256 elements
//   mn[s]         per sub-block
struct alignas(64) UnpackedBlock {
  uint8_t u[256];
  int16_t sc_pairs[128];
  int16_t mn[16];
  float d;
  float dmin;  // 0 for offset types
  uint8_t pad[24];
};
static_assert(sizeof(UnpackedBlock) == 576);

// Scalar unpacking of super-block `b` of a weight row of type w (is_q8k_weight(w)).
void unpack_block_scalar(GgmlType w, const uint8_t* row, int64_t b, UnpackedBlock* out);

// Packs rows [t_begin, t_end) of x ([n][k], k % 256 == 0) into the Q8KLayout.
void pack_q8k(const float* x, int64_t k, uint8_t* packed, int64_t t_begin, int64_t t_end);

// Scalar reference: integer sub-block dots, double accumulation.
void matmul_kquant_reference(const MatmulArgs& a);

void matmul_kquant_avx2(const MatmulArgs& a);
void matmul_kquant_avx512(const MatmulArgs& a);

// The i-quants (is_iq_block_type) token by token (iquant_groups.h), for decode and batch-invariant
// products; on AVX2 IQ4_XS's prefill too.
void matmul_iquant_decode_avx2(const MatmulArgs& a);
void matmul_iquant_decode_avx512(const MatmulArgs& a);

}  // namespace inferscope::kernels::detail
