// AVX-512 (F/BW/VL/DQ/VNNI) matmul kernels, dot form: few tokens (decode), and any number of
// tokens for batch-invariant products (TokenBatching::Invariant). Each weight row is streamed
// once and dotted with every token (memory-bound): F16/BF16 widened with vcvtph2ps / shifts,
// quantized blocks multiplied as unsigned weights x signed int8 activations with vpdpbusd (the
// activation-side correction -offset*sum(a) from the packed sums starts each block's
// accumulator), 4 (nibble types) or 2 (Q8_0) blocks per zmm. Every (row, token) sum is taken in
// the same order whatever the rows and tokens of the call, so a token's outputs are those of a
// call with that token alone. The panel form (prefill) is in matmul_avx512.cpp.

// GCC 12 reports its own _mm512_undefined_* idiom (`__Y = __Y`) as uninitialized once inlined.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/cpu/matmul_avx512_common.h"
#include "kernels/cpu/matmul_internal.h"

namespace inferscope::kernels::detail {
namespace {

// Decode streams weights from memory. The rows of a thread's range are contiguous, so each
// kernel prefetches the bytes kPrefetchTiles row tiles ahead at the rate it consumes its own,
// into L2 (PREFETCHT2 measured clearly better than T0 here). Tiles of only 2 rows keep the
// number of concurrent DRAM streams low: with 8 rows per tile F16 decode reached 82% of the
// read bandwidth, with 2 rows 93-99%.
constexpr int kPrefetchTiles = 4;
constexpr int kDecodeRows = 2;

// ---------------------------------------------------------------------------------------------
// Float weights, dot form.

template <GgmlType T>
static inline __m512 load_w16(const uint8_t* row, int64_t i) {
  if constexpr (T == GgmlType::F32) {
    return _mm512_loadu_ps(reinterpret_cast<const float*>(row) + i);
  } else if constexpr (T == GgmlType::F16) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * i)));
  } else {
    const __m512i v = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * i)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
  }
}

template <GgmlType T>
static inline __m512 load_w16_masked(const uint8_t* row, int64_t i, __mmask16 m) {
  if constexpr (T == GgmlType::F32) {
    return _mm512_maskz_loadu_ps(m, reinterpret_cast<const float*>(row) + i);
  } else if constexpr (T == GgmlType::F16) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, row + 2 * i));
  } else {
    const __m512i v = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, row + 2 * i));
    return _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
  }
}

// R rows x NT tokens over the full k. Activation rows are zero-padded to 16 floats, weights
// are not, hence the masked tail.
template <GgmlType T, int R, int NT>
void float_dot_tile(const MatmulArgs& a, int64_t r0, int64_t t0) {
  const int64_t k = a.k;
  const int64_t xs = f32_row_stride(k);
  const uint8_t* w[R];
  for (int r = 0; r < R; ++r) w[r] = a.w + (r0 + r) * a.row_bytes;
  const float* x[NT];
  for (int t = 0; t < NT; ++t) x[t] = reinterpret_cast<const float*>(a.packed) + (t0 + t) * xs;
  __m512 acc[R][NT];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NT; ++t) acc[r][t] = _mm512_setzero_ps();
  constexpr int64_t es = T == GgmlType::F32 ? 4 : 2;
  const char* ahead = reinterpret_cast<const char*>(a.w + (r0 + R * kPrefetchTiles) * a.row_bytes);
  int64_t i = 0;
  for (; i + 16 <= k; i += 16) {
    for (int64_t off = 0; off < R * 16 * es; off += 64) _mm_prefetch(ahead + i * R * es + off, _MM_HINT_T2);
    __m512 xv[NT];
    for (int t = 0; t < NT; ++t) xv[t] = _mm512_loadu_ps(x[t] + i);
    for (int r = 0; r < R; ++r) {
      const __m512 wv = load_w16<T>(w[r], i);
      for (int t = 0; t < NT; ++t) acc[r][t] = _mm512_fmadd_ps(wv, xv[t], acc[r][t]);
    }
  }
  if (i < k) {
    const __mmask16 m = static_cast<__mmask16>((1u << (k - i)) - 1u);
    __m512 xv[NT];
    for (int t = 0; t < NT; ++t) xv[t] = _mm512_loadu_ps(x[t] + i);
    for (int r = 0; r < R; ++r) {
      const __m512 wv = load_w16_masked<T>(w[r], i, m);
      for (int t = 0; t < NT; ++t) acc[r][t] = _mm512_fmadd_ps(wv, xv[t], acc[r][t]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NT; ++t) a.y[(t0 + t) * a.y_stride + r0 + r] = _mm512_reduce_add_ps(acc[r][t]);
}

template <GgmlType T, int NT>
void float_dot_rows(const MatmulArgs& a, int64_t t0) {
  constexpr int R = NT == 1 ? kDecodeRows : 4;
  int64_t r = a.row_begin;
  for (; r + R <= a.row_end; r += R) float_dot_tile<T, R, NT>(a, r, t0);
  for (; r < a.row_end; ++r) float_dot_tile<T, 1, NT>(a, r, t0);
}

template <GgmlType T>
void float_dot(const MatmulArgs& a) {
  int64_t t = 0;
  for (; t + 4 <= a.n_tokens; t += 4) float_dot_rows<T, 4>(a, t);
  switch (a.n_tokens - t) {
    case 3: float_dot_rows<T, 3>(a, t); break;
    case 2: float_dot_rows<T, 2>(a, t); break;
    case 1: float_dot_rows<T, 1>(a, t); break;
    default: break;
  }
}

// ---------------------------------------------------------------------------------------------
// Quantized weights, dot form (decode). Blocks are taken in groups that fill a zmm:
//   Q4_0 / Q4_1 / Q5_0 / Q5_1 / IQ4_NL / MXFP4: 4 blocks. The 16 qs bytes of block i go to
//         128-bit lane i; the low nibbles (elements 0-15) form one vector, the high nibbles
//         (16-31) another. Q5_x add bit 4 from qh under a byte mask; IQ4_NL and MXFP4 look their
//         levels + 128 up with vpshufb. MXFP4's levels are small (|q| <= 12), so the +128 offset
//         would dominate each lane and cancel in float: it takes |q| as the unsigned operand
//         and the sign of q onto the activations instead (no offset), and its scale is its E8M0
//         byte (block_scales).
//         The activations are regrouped the same way once per call ("prep").
//   Q8_0: 2 blocks, 64 bytes in natural order (w + 128 as the unsigned operand).
// Every vpdpbusd lane then belongs to one block; its scale dw * da is replicated to the block's
// lanes with one vpermps from a vector of 16 block scales, converted 16 blocks at a time. A
// group's accumulator starts from the activation-side correction (-offset * sum(a)) in the
// first lane of each block. Q4_1 / Q5_1 add m * da * sum(a) for 16 blocks at a time.

template <GgmlType T>
struct QGroup {
  static constexpr int kBlocks = T == GgmlType::Q8_0 ? 2 : 4;  // blocks per group
  static constexpr int kLanes = 16 / kBlocks;                   // int32 lanes per block
  static constexpr int64_t kBlockBytes = q32_block(T).bytes;
  static constexpr int64_t kActBytes = kBlocks * kQBlock;       // activation bytes per group
};

constexpr int64_t kDecodeTokens = 16;  // tokens regrouped at a time

// Per-token activations regrouped for the decode kernel.
struct DecodeToken {
  const int8_t* act;    // [n_groups][kActBytes]
  const int32_t* init;  // [n_groups][16]
  const float* da;      // [n_blocks] (points into the packed row)
  const int32_t* sum;   // [n_blocks] (points into the packed row)
};

// The offset that makes the weight operand unsigned in this kernel: none for MXFP4 (|q| and the
// sign moved to the activations), else q8_weight_offset.
static constexpr int32_t unsigned_offset(GgmlType w) { return w == GgmlType::MXFP4 ? 0 : q8_weight_offset(w); }

template <GgmlType T>
void prepare_decode(const MatmulArgs& a, DecodeToken* tokens) {
  using G = QGroup<T>;
  const Q8Layout l = q8_layout(a.k);
  const int64_t n_groups = (l.n_blocks + G::kBlocks - 1) / G::kBlocks;
  const int64_t per_token = n_groups * (G::kActBytes + 64);
  auto* buf = static_cast<uint8_t*>(thread_scratch(1, static_cast<size_t>(per_token * a.n_tokens)));
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    const uint8_t* row = a.packed + t * l.row_stride;
    const auto* qs = reinterpret_cast<const int8_t*>(row);
    const auto* sums = reinterpret_cast<const int32_t*>(row + l.sum_offset);
    auto* act = reinterpret_cast<int8_t*>(buf + t * per_token);
    auto* init = reinterpret_cast<int32_t*>(buf + t * per_token + n_groups * G::kActBytes);
    std::memset(act, 0, static_cast<size_t>(n_groups * G::kActBytes));
    std::memset(init, 0, static_cast<size_t>(n_groups * 64));
    for (int64_t b = 0; b < l.n_blocks; ++b) {
      const int64_t g = b / G::kBlocks, i = b % G::kBlocks;
      if constexpr (G::kBlocks == 4) {
        std::memcpy(act + g * 128 + 16 * i, qs + b * kQBlock, 16);
        std::memcpy(act + g * 128 + 64 + 16 * i, qs + b * kQBlock + 16, 16);
      } else {
        std::memcpy(act + g * 64 + 32 * i, qs + b * kQBlock, 32);
      }
      init[g * 16 + i * G::kLanes] = -unsigned_offset(T) * sums[b];
    }
    tokens[t] = {act, init, reinterpret_cast<const float*>(row + l.d_offset), sums};
  }
}

// Unsigned weight values of `n` (1..kBlocks) blocks starting at `blk`; lanes of missing blocks
// hold copies of block 0 (their activations and scales are zero). The nibble types return the
// values of elements 0-15 in `lo` and 16-31 in `hi` (without the Q5_x high bit), Q8_0 only `lo`.
template <GgmlType T>
static inline void load_group(const uint8_t* blk, int n, __m512i& lo, __m512i& hi) {
  constexpr Q32Block g = q32_block(T);
  const uint8_t* q = blk + g.qs;
  if constexpr (T == GgmlType::Q8_0) {
    const auto load32 = [](const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); };
    __m512i v = _mm512_broadcast_i64x4(load32(q));
    if (n > 1) v = _mm512_mask_broadcast_i64x4(v, 0xF0, load32(q + g.bytes));
    lo = _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80)));
    hi = lo;
  } else {
    const auto load16 = [](const uint8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); };
    __m512i v = _mm512_broadcast_i32x4(load16(q));
    if (n > 1) v = _mm512_mask_broadcast_i32x4(v, 0x00F0, load16(q + g.bytes));
    if (n > 2) v = _mm512_mask_broadcast_i32x4(v, 0x0F00, load16(q + 2 * g.bytes));
    if (n > 3) v = _mm512_mask_broadcast_i32x4(v, 0xF000, load16(q + 3 * g.bytes));
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    lo = _mm512_and_si512(v, m4);
    hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
    if constexpr (T == GgmlType::IQ4_NL) {
      const __m512i levels = unsigned_levels(T);
      lo = _mm512_shuffle_epi8(levels, lo);
      hi = _mm512_shuffle_epi8(levels, hi);
    } else if constexpr (T == GgmlType::MXFP4) {  // signed levels: see dot_group
      const __m512i levels = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kMxfp4Levels)));
      lo = _mm512_shuffle_epi8(levels, lo);
      hi = _mm512_shuffle_epi8(levels, hi);
    }
  }
}

// Q5_x high bits of 16 blocks (one 32-bit qh per lane) as byte masks over the groups of
// load_group: bit 16i + j of lo_bits[gi] is bit j of block 4gi + i's qh, hi_bits the same for
// bits 16-31.
static inline void q5_group_masks(__m512i qh, uint64_t lo_bits[4], uint64_t hi_bits[4]) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(lo_bits), _mm512_cvtepi32_epi16(qh));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(hi_bits), _mm512_cvtepi32_epi16(_mm512_srli_epi32(qh, 16)));
}

// The block scales d of 16 blocks from the 32-bit words at their starts: an F16 in the low
// half, or MXFP4's E8M0 byte halved (e8m0_to_fp32_half: 2^(x - 128), x = 0 and 1 subnormal).
template <GgmlType T>
static inline __m512 block_scales(__m512i d32) {
  if constexpr (T == GgmlType::MXFP4) {
    const __m512i x = _mm512_and_si512(d32, _mm512_set1_epi32(0xFF));
    const __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(x, _mm512_set1_epi32(1)), 23);
    const __m512i subnormal = _mm512_sllv_epi32(_mm512_set1_epi32(0x00200000), x);
    const __mmask16 small = _mm512_cmplt_epu32_mask(x, _mm512_set1_epi32(2));
    return _mm512_castsi512_ps(_mm512_mask_blend_epi32(small, normal, subnormal));
  } else {
    return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(d32));
  }
}

// acc + w . a per int32 lane, w unsigned (u8 x s8); MXFP4's signed w: |w| times a with w's sign.
template <GgmlType T>
static inline __m512i dot_group(__m512i acc, __m512i w, __m512i a) {
  if constexpr (T == GgmlType::MXFP4) {
    const __mmask64 negative = _mm512_movepi8_mask(w);
    a = _mm512_mask_sub_epi8(a, negative, _mm512_setzero_si512(), a);
    w = _mm512_abs_epi8(w);
  }
  return _mm512_dpbusd_epi32(acc, w, a);
}

template <GgmlType T, int R, int NT>
void quant_dot_tile(const MatmulArgs& a, const DecodeToken* tok, int64_t r0) {
  using G = QGroup<T>;
  constexpr Q32Block geo = q32_block(T);
  constexpr int64_t bsz = G::kBlockBytes;
  const int64_t nb = a.k / kQBlock;
  const uint8_t* w[R];
  for (int r = 0; r < R; ++r) w[r] = a.w + (r0 + r) * a.row_bytes;
  __m512 acc[R][NT];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NT; ++t) acc[r][t] = _mm512_setzero_ps();
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i gather_idx = _mm512_mullo_epi32(lane, _mm512_set1_epi32(static_cast<int32_t>(bsz)));
  const __m512i lane_block = _mm512_srli_epi32(lane, G::kBlocks == 4 ? 2 : 3);  // block of each lane
  const __m512i sixteen = _mm512_set1_epi8(16);
  const char* ahead = reinterpret_cast<const char*>(a.w + (r0 + R * kPrefetchTiles) * a.row_bytes);
  for (int64_t b16 = 0; b16 < nb; b16 += 16) {
    const int64_t n16 = min64(16, nb - b16);
    const __mmask16 m16 = n16 == 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << n16) - 1u);
    __m512 scale[R][NT];
    [[maybe_unused]] uint64_t high_lo[R][4], high_hi[R][4];  // Q5_x: see q5_group_masks
    {
      __m512 da[NT];
      [[maybe_unused]] __m512 da_sum[NT];  // Q4_1 / Q5_1: da * sum(a) per block
      for (int t = 0; t < NT; ++t) {
        da[t] = _mm512_maskz_loadu_ps(m16, tok[t].da + b16);
        if constexpr (geo.has_min) {
          da_sum[t] = _mm512_mul_ps(da[t], _mm512_cvtepi32_ps(_mm512_maskz_loadu_epi32(m16, tok[t].sum + b16)));
        }
      }
      for (int r = 0; r < R; ++r) {
        // The 32-bit word at each block start holds d in its low half (and m in its high half).
        const __m512i d32 = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m16, gather_idx, w[r] + b16 * bsz, 1);
        const __m512 dw = block_scales<T>(d32);
        for (int t = 0; t < NT; ++t) scale[r][t] = _mm512_mul_ps(dw, da[t]);
        if constexpr (geo.has_min) {
          const __m512 mw = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(d32, 16)));
          for (int t = 0; t < NT; ++t) acc[r][t] = _mm512_fmadd_ps(mw, da_sum[t], acc[r][t]);
        }
        if constexpr (geo.qh >= 0) {
          const __m512i qh =
              _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m16, gather_idx, w[r] + b16 * bsz + geo.qh, 1);
          q5_group_masks(qh, high_lo[r], high_hi[r]);
        }
      }
    }
    for (int64_t gi = 0; gi * G::kBlocks < n16; ++gi) {
      const int64_t b = b16 + gi * G::kBlocks;
      const int n = static_cast<int>(min64(G::kBlocks, nb - b));
      for (int64_t off = 0; off < R * G::kBlocks * bsz; off += 64) {
        _mm_prefetch(ahead + b * R * bsz + off, _MM_HINT_T2);
      }
      __m512i lo[R], hi[R];
      for (int r = 0; r < R; ++r) {
        load_group<T>(w[r] + b * bsz, n, lo[r], hi[r]);
        if constexpr (geo.qh >= 0) {
          lo[r] = _mm512_mask_add_epi8(lo[r], high_lo[r][gi], lo[r], sixteen);
          hi[r] = _mm512_mask_add_epi8(hi[r], high_hi[r][gi], hi[r], sixteen);
        }
      }
      const __m512i sidx = _mm512_add_epi32(lane_block, _mm512_set1_epi32(static_cast<int32_t>(gi * G::kBlocks)));
      const int64_t g = b / G::kBlocks;
      for (int t = 0; t < NT; ++t) {
        const __m512i init = _mm512_loadu_si512(tok[t].init + g * 16);
        const int8_t* act = tok[t].act + g * G::kActBytes;
        const __m512i a0 = _mm512_loadu_si512(act);
        for (int r = 0; r < R; ++r) {
          __m512i dot = dot_group<T>(init, lo[r], a0);
          if constexpr (G::kBlocks == 4) dot = dot_group<T>(dot, hi[r], _mm512_loadu_si512(act + 64));
          acc[r][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_permutexvar_ps(sidx, scale[r][t]), acc[r][t]);
        }
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NT; ++t) a.y[t * a.y_stride + r0 + r] = _mm512_reduce_add_ps(acc[r][t]);
}

template <GgmlType T, int NT>
void quant_dot_rows(const MatmulArgs& a, const DecodeToken* tok) {
  constexpr int R = NT >= 3 ? 4 : kDecodeRows;
  int64_t r = a.row_begin;
  for (; r + R <= a.row_end; r += R) quant_dot_tile<T, R, NT>(a, tok, r);
  for (; r < a.row_end; ++r) quant_dot_tile<T, 1, NT>(a, tok, r);
}

// At most kDecodeTokens tokens (batch-invariant products take more in turns: quant_dot).
template <GgmlType T>
void quant_dot_tokens(const MatmulArgs& a) {
  DecodeToken tokens[kDecodeTokens];
  prepare_decode<T>(a, tokens);
  int64_t t = 0;
  for (; t + 4 <= a.n_tokens; t += 4) {
    MatmulArgs sub = a;
    sub.y = a.y + t * a.y_stride;
    quant_dot_rows<T, 4>(sub, tokens + t);
  }
  MatmulArgs sub = a;
  sub.y = a.y + t * a.y_stride;
  switch (a.n_tokens - t) {
    case 3: quant_dot_rows<T, 3>(sub, tokens + t); break;
    case 2: quant_dot_rows<T, 2>(sub, tokens + t); break;
    case 1: quant_dot_rows<T, 1>(sub, tokens + t); break;
    default: break;
  }
}

template <GgmlType T>
void quant_dot(const MatmulArgs& a) {
  const int64_t stride = q8_layout(a.k).row_stride;
  for (int64_t t = 0; t < a.n_tokens; t += kDecodeTokens) {
    MatmulArgs part = a;
    part.packed = a.packed + t * stride;
    part.n_tokens = min64(kDecodeTokens, a.n_tokens - t);
    part.y = a.y + t * a.y_stride;
    quant_dot_tokens<T>(part);
  }
}

}  // namespace

void matmul_dot_avx512(const MatmulArgs& a) {
  switch (a.type) {
    case GgmlType::F32: float_dot<GgmlType::F32>(a); break;
    case GgmlType::F16: float_dot<GgmlType::F16>(a); break;
    case GgmlType::BF16: float_dot<GgmlType::BF16>(a); break;
    case GgmlType::Q8_0: quant_dot<GgmlType::Q8_0>(a); break;
    case GgmlType::Q4_0: quant_dot<GgmlType::Q4_0>(a); break;
    case GgmlType::Q4_1: quant_dot<GgmlType::Q4_1>(a); break;
    case GgmlType::Q5_0: quant_dot<GgmlType::Q5_0>(a); break;
    case GgmlType::Q5_1: quant_dot<GgmlType::Q5_1>(a); break;
    case GgmlType::IQ4_NL: quant_dot<GgmlType::IQ4_NL>(a); break;
    case GgmlType::MXFP4: quant_dot<GgmlType::MXFP4>(a); break;
    default: break;
  }
}

}  // namespace inferscope::kernels::detail
