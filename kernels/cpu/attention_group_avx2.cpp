// AVX2 + F16C fused attention over KV rows of any KvType (attention.h: attention_group), for
// groups of up to 8 queries sharing a KV head (q, or the weights, rounded to F16 first for F16
// K, or V). A 32-value block is decoded into registers as
// two halves of 16 (codes as F32, then times the block's scale) and used by every query:
//   scores: for each position, the 4 registers of each block meet up to 8 query accumulators;
//           one transposing reduction gives the 8 scores of the position;
//   values: 16 output dimensions x 4 queries of accumulators per pass over a tile of 64
//           positions (the tile's rows stay in L1 for all passes), the block's scale folded
//           into the softmax weights.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/ops.h"

namespace inferscope::kernels::detail {

namespace {

constexpr int kMaxQueries = 8;

template <KvType T>
constexpr int64_t block_bytes() {
  return T == KvType::F16 ? 64 : (T == KvType::Q8_0 ? 34 : 18);
}

template <KvType T>
inline float block_scale(const uint8_t* block) {
  if constexpr (T == KvType::F16) {
    return 1.0f;
  } else {
    uint16_t h;
    std::memcpy(&h, block, 2);
    return _cvtsh_ss(h);
  }
}

inline __m256 round_to_fp16x8(__m256 v) { return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT)); }

// x[0 .. n) rounded to F16, in place.
void round_to_fp16(float* x, int64_t n) {
  int64_t p = 0;
  for (; p + 8 <= n; p += 8) _mm256_storeu_ps(x + p, round_to_fp16x8(_mm256_loadu_ps(x + p)));
  for (; p < n; ++p) x[p] = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtps_ph(_mm_set_ss(x[p]), 0)));
}

inline __m256 nf4_levels(__m256i codes) {
  const __m256 lo = _mm256_loadu_ps(kNf4Levels);
  const __m256 hi = _mm256_loadu_ps(kNf4Levels + 8);
  const __m256 mask = _mm256_castsi256_ps(_mm256_cmpgt_epi32(codes, _mm256_set1_epi32(7)));
  return _mm256_blendv_ps(_mm256_permutevar8x32_ps(lo, codes), _mm256_permutevar8x32_ps(hi, codes), mask);
}

// Values 16 * half .. 16 * half + 15 of a block as F32, before the block's scale.
template <KvType T>
inline void decode_half(const uint8_t* block, int half, __m256* a, __m256* b) {
  if constexpr (T == KvType::F16) {
    const auto* p = reinterpret_cast<const __m128i*>(block + 32 * half);
    *a = _mm256_cvtph_ps(_mm_loadu_si128(p));
    *b = _mm256_cvtph_ps(_mm_loadu_si128(p + 1));
  } else if constexpr (T == KvType::Q8_0) {
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 2 + 16 * half));
    *a = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(c));
    *b = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(c, 8)));
  } else {
    __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 2));
    if (half) c = _mm_srli_epi16(c, 4);
    c = _mm_and_si128(c, _mm_set1_epi8(0x0F));
    const __m256i c0 = _mm256_cvtepu8_epi32(c), c1 = _mm256_cvtepu8_epi32(_mm_srli_si128(c, 8));
    if constexpr (T == KvType::NF4) {
      *a = nf4_levels(c0);
      *b = nf4_levels(c1);
    } else {  // Q4_0, Int4: code - 8
      const __m256i eight = _mm256_set1_epi32(8);
      *a = _mm256_cvtepi32_ps(_mm256_sub_epi32(c0, eight));
      *b = _mm256_cvtepi32_ps(_mm256_sub_epi32(c1, eight));
    }
  }
}

// Positions read ahead of use: a head's part of a row is a few cache lines, rows are a whole
// position apart (often 8 rows to a 4 KiB page, where the hardware prefetchers stop).
constexpr int64_t kPrefetchAhead = 16;

// Asks for the cache lines of the head's `bytes` bytes of one row.
inline void prefetch_head(const uint8_t* head, int64_t bytes) {
  for (int64_t off = 0; off < bytes; off += 64) _mm_prefetch(reinterpret_cast<const char*>(head + off), _MM_HINT_T0);
}

// Lane j of the result is the sum of the 8 lanes of a[j].
inline __m256 horizontal_sums8(const __m256* a) {
  const __m256 s0123 = _mm256_hadd_ps(_mm256_hadd_ps(a[0], a[1]), _mm256_hadd_ps(a[2], a[3]));
  const __m256 s4567 = _mm256_hadd_ps(_mm256_hadd_ps(a[4], a[5]), _mm256_hadd_ps(a[6], a[7]));
  return _mm256_add_ps(_mm256_permute2f128_ps(s0123, s4567, 0x20), _mm256_permute2f128_ps(s0123, s4567, 0x31));
}

// s8[p * 8 + i] = scale * q_i . k_p for i < NQ (lanes i >= NQ: 0).
template <KvType T, int NQ>
void scores8(const float* q, int64_t q_stride, const KvRows& k, int64_t n_kv, int64_t head_dim, float scale,
             float* s8) {
  const int64_t n_blocks = head_dim / kKvBlock;
  const int64_t head_offset = k.first / kKvBlock * block_bytes<T>();
  const __m256 vscale = _mm256_set1_ps(scale);
  const int64_t head_bytes = n_blocks * block_bytes<T>();
  // The head's part of rows p .. p + kPrefetchAhead - 1, row p at ahead[p % kPrefetchAhead]:
  // each row's address is looked up once, when it is prefetched.
  const uint8_t* ahead[kPrefetchAhead];
  for (int64_t p = 0; p < std::min(kPrefetchAhead, n_kv); ++p) ahead[p] = k.row(p) + head_offset;
  for (int64_t p = 0; p < n_kv; ++p) {
    __m256 acc[kMaxQueries];
    for (int i = 0; i < kMaxQueries; ++i) acc[i] = _mm256_setzero_ps();
    const uint8_t*& slot = ahead[p % kPrefetchAhead];
    const uint8_t* row = slot;
    if (p + kPrefetchAhead < n_kv) {
      slot = k.row(p + kPrefetchAhead) + head_offset;
      prefetch_head(slot, head_bytes);
    }
    for (int64_t b = 0; b < n_blocks; ++b) {
      const uint8_t* block = row + b * block_bytes<T>();
      const __m256 d = _mm256_set1_ps(block_scale<T>(block));
      __m256 kv[4];
      decode_half<T>(block, 0, &kv[0], &kv[1]);
      decode_half<T>(block, 1, &kv[2], &kv[3]);
      for (int r = 0; r < 4; ++r) kv[r] = _mm256_mul_ps(kv[r], d);
      for (int i = 0; i < NQ; ++i) {
        const float* qb = q + i * q_stride + b * kKvBlock;
        for (int r = 0; r < 4; ++r) acc[i] = _mm256_fmadd_ps(_mm256_loadu_ps(qb + 8 * r), kv[r], acc[i]);
      }
    }
    _mm256_storeu_ps(s8 + p * 8, _mm256_mul_ps(horizontal_sums8(acc), vscale));
  }
}

// out_{i0+i}[16 * part .. + 16) += sum_p w8[p * 8 + i0 + i] * v_p[...] for i < QN, p in
// [p0, p0 + n); rows[p - p0] is the head's part of V row p.
template <KvType T, int QN>
void values_part(const float* w8, int i0, const uint8_t* const* rows, int64_t p0, int64_t n, int64_t part,
                 float* out, int64_t out_stride) {
  const int64_t block = part / 2;
  const int half = static_cast<int>(part % 2);
  const int64_t block_offset = block * block_bytes<T>();
  __m256 acc[QN][2];
  for (int i = 0; i < QN; ++i) {
    const float* o = out + (i0 + i) * out_stride + 16 * part;
    acc[i][0] = _mm256_loadu_ps(o);
    acc[i][1] = _mm256_loadu_ps(o + 8);
  }
  __m256i lane[QN];
  for (int i = 0; i < QN; ++i) lane[i] = _mm256_set1_epi32(i0 + i);
  for (int64_t p = p0; p < p0 + n; ++p) {
    const uint8_t* blk = rows[p - p0] + block_offset;
    __m256 a, b;
    decode_half<T>(blk, half, &a, &b);
    const __m256 wd = _mm256_mul_ps(_mm256_loadu_ps(w8 + p * 8), _mm256_set1_ps(block_scale<T>(blk)));
    for (int i = 0; i < QN; ++i) {
      const __m256 w = _mm256_permutevar8x32_ps(wd, lane[i]);
      acc[i][0] = _mm256_fmadd_ps(w, a, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(w, b, acc[i][1]);
    }
  }
  for (int i = 0; i < QN; ++i) {
    float* o = out + (i0 + i) * out_stride + 16 * part;
    _mm256_storeu_ps(o, acc[i][0]);
    _mm256_storeu_ps(o + 8, acc[i][1]);
  }
}

// Positions per tile of the weighted sum: the tile's V rows stay in L1 while every
// (16 dimensions x 4 queries) pass reads them. Their addresses are looked up once per tile
// (through the block table when paged), not once per pass.
constexpr int64_t kValueTile = 64;

template <KvType T>
void values(const float* w8, int n_q, const KvRows& v, int64_t n_kv, int64_t head_dim, float* out,
            int64_t out_stride) {
  for (int i = 0; i < n_q; ++i) std::memset(out + i * out_stride, 0, static_cast<size_t>(head_dim) * sizeof(float));
  const int64_t head_offset = v.first / kKvBlock * block_bytes<T>();
  const int64_t head_bytes = head_dim / kKvBlock * block_bytes<T>();
  const uint8_t* tiles[2][kValueTile];  // this tile's rows, and the next one's (prefetched)
  for (int64_t p = 0; p < std::min(kValueTile, n_kv); ++p) tiles[0][p] = v.row(p) + head_offset;
  for (int64_t p0 = 0, tile = 0; p0 < n_kv; p0 += kValueTile, tile ^= 1) {
    const int64_t n = std::min(kValueTile, n_kv - p0);
    const uint8_t* const* rows = tiles[tile];
    for (int64_t p = p0 + kValueTile; p < std::min(n_kv, p0 + 2 * kValueTile); ++p) {
      const uint8_t* next = v.row(p) + head_offset;
      tiles[tile ^ 1][p - p0 - kValueTile] = next;
      prefetch_head(next, head_bytes);
    }
    for (int64_t part = 0; part < head_dim / 16; ++part) {
      for (int i0 = 0; i0 < n_q; i0 += 4) {
        switch (n_q - i0 >= 4 ? 4 : n_q - i0) {
          case 1: values_part<T, 1>(w8, i0, rows, p0, n, part, out, out_stride); break;
          case 2: values_part<T, 2>(w8, i0, rows, p0, n, part, out, out_stride); break;
          case 3: values_part<T, 3>(w8, i0, rows, p0, n, part, out, out_stride); break;
          default: values_part<T, 4>(w8, i0, rows, p0, n, part, out, out_stride); break;
        }
      }
    }
  }
}

template <KvType T>
void scores_for(int n_q, const float* q, int64_t q_stride, const KvRows& k, int64_t n_kv, int64_t head_dim,
                float scale, float* s8) {
  switch (n_q) {
    case 1: scores8<T, 1>(q, q_stride, k, n_kv, head_dim, scale, s8); break;
    case 2: scores8<T, 2>(q, q_stride, k, n_kv, head_dim, scale, s8); break;
    case 3: scores8<T, 3>(q, q_stride, k, n_kv, head_dim, scale, s8); break;
    case 4: scores8<T, 4>(q, q_stride, k, n_kv, head_dim, scale, s8); break;
    case 5: scores8<T, 5>(q, q_stride, k, n_kv, head_dim, scale, s8); break;
    case 6: scores8<T, 6>(q, q_stride, k, n_kv, head_dim, scale, s8); break;
    case 7: scores8<T, 7>(q, q_stride, k, n_kv, head_dim, scale, s8); break;
    default: scores8<T, 8>(q, q_stride, k, n_kv, head_dim, scale, s8); break;
  }
}

void all_scores(int n_q, const float* q, int64_t q_stride, const KvRows& k, int64_t n_kv, int64_t head_dim,
                float scale, float* s8) {
  switch (k.type) {
    case KvType::F16: scores_for<KvType::F16>(n_q, q, q_stride, k, n_kv, head_dim, scale, s8); break;
    case KvType::Q8_0: scores_for<KvType::Q8_0>(n_q, q, q_stride, k, n_kv, head_dim, scale, s8); break;
    case KvType::NF4: scores_for<KvType::NF4>(n_q, q, q_stride, k, n_kv, head_dim, scale, s8); break;
    case KvType::Q4_0:
    case KvType::Int4: scores_for<KvType::Q4_0>(n_q, q, q_stride, k, n_kv, head_dim, scale, s8); break;
  }
}

void all_values(int n_q, const float* w8, const KvRows& v, int64_t n_kv, int64_t head_dim, float* out,
                int64_t out_stride) {
  switch (v.type) {
    case KvType::F16: values<KvType::F16>(w8, n_q, v, n_kv, head_dim, out, out_stride); break;
    case KvType::Q8_0: values<KvType::Q8_0>(w8, n_q, v, n_kv, head_dim, out, out_stride); break;
    case KvType::NF4: values<KvType::NF4>(w8, n_q, v, n_kv, head_dim, out, out_stride); break;
    case KvType::Q4_0:
    case KvType::Int4: values<KvType::Q4_0>(w8, n_q, v, n_kv, head_dim, out, out_stride); break;
  }
}

}  // namespace

void attention_group_fused_avx2(const float* q, int64_t q_stride, int64_t n_q, const KvRows& k, const KvRows& v,
                                int64_t n_kv, int64_t head_dim, float scale, float softcap, float* scores,
                                float* out, int64_t out_stride) {
  const int nq = static_cast<int>(n_q);
  alignas(32) float qh[kMaxQueries * 1024];  // q rounded to F16 (llama.cpp's F16 numerics)
  if (k.type == KvType::F16) {
    for (int i = 0; i < nq; ++i) {
      for (int64_t d = 0; d < head_dim; d += 8) {
        _mm256_store_ps(qh + i * head_dim + d, round_to_fp16x8(_mm256_loadu_ps(q + i * q_stride + d)));
      }
    }
    q = qh;
    q_stride = head_dim;
  }
  float* s8 = scores;                  // [n_kv][8]: the scores, then the softmax weights
  float* rows = scores + 8 * n_kv;     // [nq][n_kv]: one query's scores at a time
  all_scores(nq, q, q_stride, k, n_kv, head_dim, scale, s8);
  for (int i = 0; i < nq; ++i) {
    float* s = rows + i * n_kv;
    for (int64_t p = 0; p < n_kv; ++p) s[p] = s8[p * 8 + i];
    if (softcap > 0.0f) kernels::softcap(s, n_kv, softcap);
    softmax(s, n_kv);
    if (v.type == KvType::F16) round_to_fp16(s, n_kv);
    for (int64_t p = 0; p < n_kv; ++p) s8[p * 8 + i] = s[p];
  }
  all_values(nq, s8, v, n_kv, head_dim, out, out_stride);
}

}  // namespace inferscope::kernels::detail
