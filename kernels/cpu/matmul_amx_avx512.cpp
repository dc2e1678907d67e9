// AMX matmul kernels for prefill with F16 and BF16 weights (F32 weights use the exact AVX-512 path).
//
// TDPBF16PS multiplies bf16 tiles with float32 accumulation. bf16 keeps 8 significant bits, so
// values are split into two bf16 terms, v = hi + lo (hi = bf16(v), lo = bf16(v - hi)), which
// together keep about 16 bits (F16 and BF16 weights are split exactly). Products:
//   F16 weights: W.x ~ Wh.xh + Wh.xl + Wl.xh   (the dropped Wl.xl is ~2^-16 relative)
//   BF16 weights:      W.x ~ W.xh + W.xl
// Tiles: A = 16 weight rows x 32 k (row-major bf16; BF16 weights are read in place), B = the
// activations of 16 tokens in the pair-interleaved layout TDPBF16PS wants (prepared once per
// call), C = 16 rows x 16 tokens, blocked 2 x 2 (32 rows x 32 tokens) in the 8 tile registers.
// Quantized weights use the AVX-512 VNNI kernels.

// AMX intrinsics need their target flags; the file is otherwise built as an AVX-512 file.
#pragma GCC target("amx-tile,amx-int8,amx-bf16")
// GCC 12 reports its own _mm512_undefined_* idiom (`__Y = __Y`) as uninitialized once inlined.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/cpu/matmul_internal.h"

namespace inferscope::kernels::detail {
namespace {

constexpr int64_t kTileBytes = 1024;  // 16 rows x 64 bytes

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

struct TileConfig {
  uint8_t palette_id;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};

void configure_tiles() {
  TileConfig cfg;
  std::memset(&cfg, 0, sizeof cfg);
  cfg.palette_id = 1;
  for (int i = 0; i < 8; ++i) {
    cfg.colsb[i] = 64;
    cfg.rows[i] = 16;
  }
  _tile_loadconfig(&cfg);
}

// 16 x 16 transpose of 32-bit elements in registers.
static inline void transpose16(__m512i r[16]) {
  __m512i t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  __m512i u[16];
  for (int q = 0; q < 4; ++q) {
    u[4 * q] = _mm512_unpacklo_epi64(t[4 * q], t[4 * q + 2]);
    u[4 * q + 1] = _mm512_unpackhi_epi64(t[4 * q], t[4 * q + 2]);
    u[4 * q + 2] = _mm512_unpacklo_epi64(t[4 * q + 1], t[4 * q + 3]);
    u[4 * q + 3] = _mm512_unpackhi_epi64(t[4 * q + 1], t[4 * q + 3]);
  }
  for (int j = 0; j < 4; ++j) {
    const __m512i v0 = _mm512_shuffle_i32x4(u[j], u[4 + j], 0x44);
    const __m512i v1 = _mm512_shuffle_i32x4(u[j], u[4 + j], 0xEE);
    const __m512i v2 = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0x44);
    const __m512i v3 = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0xEE);
    r[j] = _mm512_shuffle_i32x4(v0, v2, 0x88);
    r[4 + j] = _mm512_shuffle_i32x4(v0, v2, 0xDD);
    r[8 + j] = _mm512_shuffle_i32x4(v1, v3, 0x88);
    r[12 + j] = _mm512_shuffle_i32x4(v1, v3, 0xDD);
  }
}

static inline __m512 bf16_low_half_to_f32(__m512i packed) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(packed)), 16));
}

static inline __m512 bf16_high_half_to_f32(__m512i packed) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(packed, 1)), 16));
}

// Splits 32 floats (f0: elements 0-15, f1: 16-31) into bf16 hi and lo vectors of 32 elements.
static inline void split_bf16(__m512 f0, __m512 f1, __m512i& hi, __m512i& lo) {
  hi = (__m512i)_mm512_cvtne2ps_pbh(f1, f0);
  const __m512 r0 = _mm512_sub_ps(f0, bf16_low_half_to_f32(hi));
  const __m512 r1 = _mm512_sub_ps(f1, bf16_high_half_to_f32(hi));
  lo = (__m512i)_mm512_cvtne2ps_pbh(r1, r0);
}

// Activations of all tokens as B tiles: [token tile][k step][hi, lo] x 1 KiB, where a tile's
// row i holds, for each of its 16 tokens n, the bf16 pair (k = 32 s + 2i, 32 s + 2i + 1).
// Tokens past n_tokens and k past k are zero.
uint8_t* prepare_activation_tiles(const MatmulArgs& a, int64_t n_ks, int64_t n_tt) {
  auto* out = static_cast<uint8_t*>(thread_scratch(1, static_cast<size_t>(n_tt * n_ks * 2 * kTileBytes)));
  const int64_t xs = f32_row_stride(a.k);
  const auto* x = reinterpret_cast<const float*>(a.packed);
  for (int64_t tt = 0; tt < n_tt; ++tt) {
    for (int64_t ks = 0; ks < n_ks; ++ks) {
      const int64_t k0 = ks * 32;
      const int64_t nk = min64(32, a.k - k0);
      const __mmask16 m0 = nk >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << nk) - 1u);
      const __mmask16 m1 = nk >= 32 ? static_cast<__mmask16>(0xFFFF)
                                    : (nk <= 16 ? static_cast<__mmask16>(0) : static_cast<__mmask16>((1u << (nk - 16)) - 1u));
      __m512i hi[16], lo[16];
      for (int n = 0; n < 16; ++n) {
        const int64_t t = tt * 16 + n;
        if (t < a.n_tokens) {
          const float* row = x + t * xs + k0;
          split_bf16(_mm512_maskz_loadu_ps(m0, row), _mm512_maskz_loadu_ps(m1, row + 16), hi[n], lo[n]);
        } else {
          hi[n] = _mm512_setzero_si512();
          lo[n] = _mm512_setzero_si512();
        }
      }
      // Row n holds token n's 16 pairs; the tile wants pair i of every token in row i.
      transpose16(hi);
      transpose16(lo);
      uint8_t* dst = out + ((tt * n_ks + ks) * 2) * kTileBytes;
      for (int i = 0; i < 16; ++i) {
        _mm512_store_si512(dst + 64 * i, hi[i]);
        _mm512_store_si512(dst + kTileBytes + 64 * i, lo[i]);
      }
    }
  }
  return out;
}

// Weights of 16 rows, k steps [ks0, ks1), converted to row-major bf16 tiles: [k step][hi, lo] x
// 1 KiB (lo only for F16). Rows past row_end and k past k are zero.
template <GgmlType T>
void prepare_weight_tiles(const MatmulArgs& a, int64_t r0, int64_t ks0, int64_t ks1, uint8_t* out) {
  static_assert(T == GgmlType::F16 || T == GgmlType::BF16);
  constexpr int64_t es = 2;
  for (int r = 0; r < 16; ++r) {
    const int64_t row = r0 + r;
    const uint8_t* src = a.w + row * a.row_bytes;
    // The same part of the next panel's rows (32 rows on), fetched into L2 while this panel is
    // computed: in prefill the weights come from DRAM, and this loop would otherwise wait for them.
    const char* next = reinterpret_cast<const char*>(src + 32 * a.row_bytes);
    for (int64_t ks = ks0; ks < ks1; ++ks) {
      for (int64_t off = 0; off < 32 * es; off += 64) _mm_prefetch(next + ks * 32 * es + off, _MM_HINT_T2);
      uint8_t* hi_dst = out + (ks - ks0) * 2 * kTileBytes + 64 * r;
      uint8_t* lo_dst = hi_dst + kTileBytes;
      if (row >= a.row_end) {
        _mm512_store_si512(hi_dst, _mm512_setzero_si512());
        _mm512_store_si512(lo_dst, _mm512_setzero_si512());
        continue;
      }
      const int64_t k0 = ks * 32;
      const int64_t nk = min64(32, a.k - k0);
      const __mmask16 m0 = nk >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << nk) - 1u);
      const __mmask16 m1 = nk >= 32 ? static_cast<__mmask16>(0xFFFF)
                                    : (nk <= 16 ? static_cast<__mmask16>(0) : static_cast<__mmask16>((1u << (nk - 16)) - 1u));
      if constexpr (T == GgmlType::BF16) {
        const __mmask32 m = nk >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((1ull << nk) - 1u);
        _mm512_store_si512(hi_dst, _mm512_maskz_loadu_epi16(m, src + k0 * es));
        _mm512_store_si512(lo_dst, _mm512_setzero_si512());
      } else {
        const __m512 f0 = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m0, src + k0 * es));
        const __m512 f1 = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m1, src + (k0 + 16) * es));
        __m512i hi, lo;
        split_bf16(f0, f1, hi, lo);
        _mm512_store_si512(hi_dst, hi);
        _mm512_store_si512(lo_dst, lo);
      }
    }
  }
}

// Where the A tiles (weights) of one 16-row tile come from.
struct WeightTiles {
  const uint8_t* hi;  // tile of k step 0
  const uint8_t* lo;  // nullptr when the weights are exact in bf16
  int64_t stride;     // bytes between tile rows
  int64_t step;       // bytes between k steps
};

// C (16 rows x 16 tokens) -> y[token][row] for `n_rows` rows and `n_tok` tokens.
static inline void store_c(const MatmulArgs& a, const float* c, int64_t r0, int64_t n_rows, int64_t t0, int64_t n_tok) {
  __m512i v[16];
  for (int i = 0; i < 16; ++i) v[i] = _mm512_load_si512(c + 16 * i);
  transpose16(v);
  const __mmask16 m = n_rows >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << n_rows) - 1u);
  for (int n = 0; n < n_tok; ++n) {
    _mm512_mask_storeu_ps(a.y + (t0 + n) * a.y_stride + r0, m, _mm512_castsi512_ps(v[n]));
  }
}

// RN row tiles (1-2) x TM token tiles (1-2) over k steps [ks0, ks1). Tile registers: C 0-3
// (C[rn][tm] = 2 rn + tm), A 4-5, B 6-7. C starts from `c_part` (tile layout, 1 KiB per tile,
// [rn][tm]) unless `first`, and goes back there unless `last`, when it is written to y.
template <int RN, int TM, bool kWeightLo>
void amx_block(const MatmulArgs& a, const WeightTiles* w, const uint8_t* act, int64_t n_ks, int64_t ks0, int64_t ks1,
               int64_t r0, int64_t t0, float* c_part, bool first, bool last, float* c_buf) {
  auto part = [&](int rn, int tm) { return reinterpret_cast<uint8_t*>(c_part) + (2 * rn + tm) * kTileBytes; };
  if (first) {
    _tile_zero(0);
    if constexpr (TM == 2) _tile_zero(1);
    if constexpr (RN == 2) _tile_zero(2);
    if constexpr (RN == 2 && TM == 2) _tile_zero(3);
  } else {
    _tile_loadd(0, part(0, 0), 64);
    if constexpr (TM == 2) _tile_loadd(1, part(0, 1), 64);
    if constexpr (RN == 2) _tile_loadd(2, part(1, 0), 64);
    if constexpr (RN == 2 && TM == 2) _tile_loadd(3, part(1, 1), 64);
  }
  const int64_t act_tt_bytes = n_ks * 2 * kTileBytes;  // between token tiles
  for (int64_t ks = ks0; ks < ks1; ++ks) {
    const uint8_t* b0 = act + ks * 2 * kTileBytes;
    const uint8_t* b1 = b0 + act_tt_bytes;
    _tile_loadd(4, w[0].hi + ks * w[0].step, w[0].stride);
    if constexpr (RN == 2) _tile_loadd(5, w[1].hi + ks * w[1].step, w[1].stride);
    _tile_loadd(6, b0, 64);
    if constexpr (TM == 2) _tile_loadd(7, b1, 64);
    _tile_dpbf16ps(0, 4, 6);
    if constexpr (TM == 2) _tile_dpbf16ps(1, 4, 7);
    if constexpr (RN == 2) _tile_dpbf16ps(2, 5, 6);
    if constexpr (RN == 2 && TM == 2) _tile_dpbf16ps(3, 5, 7);
    // W_hi . x_lo
    _tile_loadd(6, b0 + kTileBytes, 64);
    if constexpr (TM == 2) _tile_loadd(7, b1 + kTileBytes, 64);
    _tile_dpbf16ps(0, 4, 6);
    if constexpr (TM == 2) _tile_dpbf16ps(1, 4, 7);
    if constexpr (RN == 2) _tile_dpbf16ps(2, 5, 6);
    if constexpr (RN == 2 && TM == 2) _tile_dpbf16ps(3, 5, 7);
    if constexpr (kWeightLo) {  // W_lo . x_hi
      _tile_loadd(4, w[0].lo + ks * w[0].step, w[0].stride);
      if constexpr (RN == 2) _tile_loadd(5, w[1].lo + ks * w[1].step, w[1].stride);
      _tile_loadd(6, b0, 64);
      if constexpr (TM == 2) _tile_loadd(7, b1, 64);
      _tile_dpbf16ps(0, 4, 6);
      if constexpr (TM == 2) _tile_dpbf16ps(1, 4, 7);
      if constexpr (RN == 2) _tile_dpbf16ps(2, 5, 6);
      if constexpr (RN == 2 && TM == 2) _tile_dpbf16ps(3, 5, 7);
    }
  }
  if (!last) {
    _tile_stored(0, part(0, 0), 64);
    if constexpr (TM == 2) _tile_stored(1, part(0, 1), 64);
    if constexpr (RN == 2) _tile_stored(2, part(1, 0), 64);
    if constexpr (RN == 2 && TM == 2) _tile_stored(3, part(1, 1), 64);
    return;
  }
  const int64_t n_rows0 = min64(16, a.row_end - r0);
  const int64_t n_rows1 = min64(16, a.row_end - r0 - 16);
  const int64_t n_tok0 = min64(16, a.n_tokens - t0);
  const int64_t n_tok1 = min64(16, a.n_tokens - t0 - 16);
  _tile_stored(0, c_buf, 64);
  store_c(a, c_buf, r0, n_rows0, t0, n_tok0);
  if constexpr (TM == 2) {
    _tile_stored(1, c_buf, 64);
    store_c(a, c_buf, r0, n_rows0, t0 + 16, n_tok1);
  }
  if constexpr (RN == 2) {
    _tile_stored(2, c_buf, 64);
    store_c(a, c_buf, r0 + 16, n_rows1, t0, n_tok0);
  }
  if constexpr (RN == 2 && TM == 2) {
    _tile_stored(3, c_buf, 64);
    store_c(a, c_buf, r0 + 16, n_rows1, t0 + 16, n_tok1);
  }
}

template <int RN, bool kWeightLo>
void amx_row_block(const MatmulArgs& a, const WeightTiles* w, const uint8_t* act, int64_t n_ks, int64_t n_tt,
                   int64_t ks0, int64_t ks1, int64_t r0, float* c_part, float* c_buf) {
  const int64_t act_tt_bytes = n_ks * 2 * kTileBytes;
  const bool first = ks0 == 0, last = ks1 == n_ks;
  int64_t tt = 0;
  for (; tt + 2 <= n_tt; tt += 2) {
    amx_block<RN, 2, kWeightLo>(a, w, act + tt * act_tt_bytes, n_ks, ks0, ks1, r0, tt * 16,
                                c_part + tt * 2 * 256, first, last, c_buf);
  }
  if (tt < n_tt) {
    amx_block<RN, 1, kWeightLo>(a, w, act + tt * act_tt_bytes, n_ks, ks0, ks1, r0, tt * 16, c_part + tt * 2 * 256,
                                first, last, c_buf);
  }
}

template <GgmlType T>
void amx_float(const MatmulArgs& a) {
  constexpr bool kWeightLo = T != GgmlType::BF16;
  const int64_t n_ks = (a.k + 31) / 32;
  const int64_t n_tt = (a.n_tokens + 15) / 16;
  // K is processed in chunks whose activation tiles (2 KiB per token tile and k step) stay in
  // L2 while every row panel of this thread passes over them; partial sums wait in c_parts.
  const int64_t chunk = n_ks <= 64 ? n_ks : (n_tt * 64 <= 512 ? 64 : (512 / n_tt < 8 ? 8 : 512 / n_tt));
  const bool chunked = chunk < n_ks;
  // Rows go in groups of up to kGroupPanels panels so that c_parts stays small.
  constexpr int64_t kGroupPanels = 16;
  const int64_t n_panels = (a.row_end - a.row_begin + 31) / 32;
  configure_tiles();
  const uint8_t* act = prepare_activation_tiles(a, n_ks, n_tt);
  const size_t panel_bytes = static_cast<size_t>(2 * chunk * 2 * kTileBytes);
  const size_t parts_bytes =
      chunked ? static_cast<size_t>(min64(n_panels, kGroupPanels) * n_tt * 4 * kTileBytes) : 0;
  auto* scratch = static_cast<uint8_t*>(thread_scratch(0, panel_bytes + parts_bytes + kTileBytes));
  uint8_t* panel = scratch;
  float* c_parts = reinterpret_cast<float*>(scratch + panel_bytes);
  float* c_buf = reinterpret_cast<float*>(scratch + panel_bytes + parts_bytes);
  for (int64_t p0 = 0; p0 < n_panels; p0 += kGroupPanels) {
    const int64_t p1 = min64(n_panels, p0 + kGroupPanels);
    for (int64_t ks0 = 0; ks0 < n_ks; ks0 += chunk) {
      const int64_t ks1 = min64(n_ks, ks0 + chunk);
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t r0 = a.row_begin + 32 * p;
        const int RN = a.row_end - r0 > 16 ? 2 : 1;
        WeightTiles w[2];
        for (int rt = 0; rt < RN; ++rt) {
          const int64_t rows0 = r0 + 16 * rt;
          if (T == GgmlType::BF16 && a.k % 32 == 0 && rows0 + 16 <= a.row_end) {
            w[rt] = {a.w + rows0 * a.row_bytes, nullptr, a.row_bytes, 64};  // read in place
          } else {
            // Tiles of this chunk only, addressed as if the panel started at k step 0.
            uint8_t* dst = panel + rt * chunk * 2 * kTileBytes;
            prepare_weight_tiles<T>(a, rows0, ks0, ks1, dst);
            uint8_t* base = dst - ks0 * 2 * kTileBytes;
            w[rt] = {base, base + kTileBytes, 64, 2 * kTileBytes};
          }
        }
        float* part = c_parts + (p - p0) * n_tt * 4 * 256;
        if (RN == 2) {
          amx_row_block<2, kWeightLo>(a, w, act, n_ks, n_tt, ks0, ks1, r0, part, c_buf);
        } else {
          amx_row_block<1, kWeightLo>(a, w, act, n_ks, n_tt, ks0, ks1, r0, part, c_buf);
        }
      }
    }
  }
  _tile_release();
}

}  // namespace

void matmul_amx(const MatmulArgs& a) {
  if (kernel_tokens(a) < kAmxMinTokens) {
    matmul_avx512(a);
    return;
  }
  // F32 weights stay on the exact AVX-512 path: the two-part bf16 split doubled stories260K's
  // distance to llama.cpp's logits (3e-3 -> 6e-3), and F32 models are small anyway.
  switch (a.type) {
    case GgmlType::F16: amx_float<GgmlType::F16>(a); break;
    case GgmlType::BF16: amx_float<GgmlType::BF16>(a); break;
    default: matmul_avx512(a); break;
  }
}

}  // namespace inferscope::kernels::detail
