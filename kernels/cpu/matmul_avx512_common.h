// Internal to the AVX-512 matmul kernels (matmul_avx512.cpp, matmul_dot_avx512.cpp): small
// helpers both forms use. Included only by files built with the AVX-512 flags.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/matmul_internal.h"

namespace inferscope::kernels::detail {

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// The levels of a non-linear 4-bit type (IQ4_NL, MXFP4: q32_levels) + 128 (unsigned) in every
// 128-bit lane, for vpshufb.
static inline __m512i unsigned_levels(GgmlType w) {
  const __m128i levels = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q32_levels(w)));
  return _mm512_xor_si512(_mm512_broadcast_i32x4(levels), _mm512_set1_epi8(static_cast<char>(0x80)));
}

}  // namespace inferscope::kernels::detail
