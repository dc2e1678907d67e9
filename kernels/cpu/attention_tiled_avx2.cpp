// AVX2 + F16C tiled attention (attention.h: attention_tokens). The queries of a call (the
// heads of one GQA group, for one or more tokens of a sequence) go in blocks of up to
// kAttentionQueryBlock, each in two passes over tiles of kAttentionTile positions:
//   scores: the tile's K rows are transposed to [head_dim][tile] (quantized rows decoded to F32
//           with their block scales first, F16 rows converted as they are read); a register
//           block of 4-6 queries x 16 positions then runs along head_dim, broadcasting q (a
//           small GEMM: no horizontal sums, the tile shared by every query of the block); then
//           each query's softmax over its own positions;
//   values: a register block of 4-6 queries x 16 dimensions runs along the tile's V rows
//           (decoded once when quantized, read as F16 otherwise), broadcasting the weights.
// Every output is computed by the same operations in the same order whatever the other queries
// of the call: a token gets the same bits decoded alone or prefilled among others, and with
// any chunking of a prompt. Masked positions (beyond a query's rows) get weight 0 and add
// nothing.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/ops.h"

namespace inferscope::kernels::detail {

namespace {

constexpr int64_t kTile = kAttentionTile;
constexpr int kRegisterQueries = 6;  // queries per register block (12 accumulators)

template <KvType T>
constexpr int64_t block_bytes() {
  return T == KvType::F16 ? 64 : (T == KvType::Q8_0 ? 34 : 18);
}

template <KvType T>
inline float block_scale(const uint8_t* block) {
  uint16_t h;
  std::memcpy(&h, block, 2);
  return _cvtsh_ss(h);
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

// Values 16 * half .. 16 * half + 15 of a quantized block as F32, before the block's scale.
template <KvType T>
inline void decode_half(const uint8_t* block, int half, __m256* a, __m256* b) {
  if constexpr (T == KvType::Q8_0) {
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

// Byte offset of the head's first value in a row.
template <KvType T>
int64_t head_offset(int64_t first) {
  return T == KvType::F16 ? 2 * first : first / kKvBlock * block_bytes<T>();
}

// dst[0 .. head_dim) = the head's values (times their blocks' scales).
template <KvType T>
void decode_head(const uint8_t* head, int64_t head_dim, float* dst) {
  if constexpr (T == KvType::F16) {
    for (int64_t d = 0; d < head_dim; d += 8) {
      _mm256_storeu_ps(dst + d, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(head + 2 * d))));
    }
  } else {
    for (int64_t b = 0; b < head_dim / kKvBlock; ++b) {
      const uint8_t* block = head + b * block_bytes<T>();
      const __m256 scale = _mm256_set1_ps(block_scale<T>(block));
      __m256 x[4];
      decode_half<T>(block, 0, &x[0], &x[1]);
      decode_half<T>(block, 1, &x[2], &x[3]);
      for (int r = 0; r < 4; ++r) _mm256_storeu_ps(dst + b * kKvBlock + 8 * r, _mm256_mul_ps(x[r], scale));
    }
  }
}

// Asks for the cache lines of `bytes` bytes from `p`.
inline void prefetch_bytes(const uint8_t* p, int64_t bytes) {
  for (int64_t off = 0; off < bytes; off += 64) _mm_prefetch(reinterpret_cast<const char*>(p + off), _MM_HINT_T0);
}

// The rows of one K or V head, tile by tile: each tile's row addresses are looked up (through
// the block table when paged) once, and the next tile's rows prefetched, since rows lie a whole
// position apart (often 8 to a 4 KiB page, where the hardware prefetchers stop).
template <KvType T>
class TileReader {
 public:
  TileReader(const KvRows& rows, int64_t head_dim)
      : rows_(rows), offset_(head_offset<T>(rows.first)), bytes_(head_offset<T>(head_dim)) {}

  // The heads of rows p0 .. p0 + n; the rows of the tile from p0 + kTile up to `end` are
  // prefetched.
  const uint8_t* const* tile(int64_t p0, int64_t n, int64_t end) {
    if (p0 != next_p0_) locate(p0, n, current_);
    const int64_t ahead = std::clamp<int64_t>(end - p0 - kTile, 0, kTile);
    locate(p0 + kTile, ahead, next_);
    for (int64_t p = 0; p < ahead; ++p) prefetch_bytes(next_[p], bytes_);
    std::swap(current_, next_);
    next_p0_ = p0 + kTile;
    return next_;  // the tile located before the swap
  }

 private:
  void locate(int64_t p0, int64_t n, const uint8_t** heads) const {
    for (int64_t p = 0; p < n; ++p) heads[p] = rows_.row(p0 + p) + offset_;
  }

  const KvRows& rows_;
  int64_t offset_, bytes_;
  int64_t next_p0_ = -1;
  const uint8_t* heads_[2][kTile] = {};
  const uint8_t** current_ = heads_[0];
  const uint8_t** next_ = heads_[1];
};

// rows[p][0 .. head_dim) = the decoded heads[p], p < n.
template <KvType T>
void decode_rows(const uint8_t* const* heads, int64_t n, int64_t head_dim, float* rows) {
  for (int64_t p = 0; p < n; ++p) decode_head<T>(heads[p], head_dim, rows + p * head_dim);
}

// 8 values at dimension d of row p, as the kernels read a tile's rows: decoded F32 rows, or
// the F16 rows themselves (converted as they are read: no decoded copy).
struct F32Rows {
  const float* rows;
  int64_t head_dim;
  __m256 operator()(int64_t p, int64_t d) const { return _mm256_loadu_ps(rows + p * head_dim + d); }
};
struct F16Rows {
  const uint8_t* const* heads;
  __m256 operator()(int64_t p, int64_t d) const {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(heads[p] + 2 * d)));
  }
};

// Transposes the 8x8 floats of r[0..8) (row i: r[i]) in place.
inline void transpose8x8(__m256* r) {
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
    r[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
  }
}

// kt[d][p] = row p's value d for p < n, 0 for n <= p < n16 (n16 a multiple of 8), d < head_dim;
// kt rows are kTile apart.
template <class Rows>
void transpose_tile(const Rows& rows, int64_t n, int64_t n16, int64_t head_dim, float* kt) {
  for (int64_t p = 0; p < n16; p += 8) {
    for (int64_t d = 0; d < head_dim; d += 8) {
      __m256 r[8];
      for (int i = 0; i < 8; ++i) r[i] = p + i < n ? rows(p + i, d) : _mm256_setzero_ps();
      transpose8x8(r);
      for (int i = 0; i < 8; ++i) _mm256_storeu_ps(kt + (d + i) * kTile + p, r[i]);
    }
  }
}

// s[r * s_stride + j] = scale * q_r . k_j for r < QR, the 16 positions j of kt (kt[d * kTile + j]),
// q_r = q[r * head_dim ..]: each sum runs along d in order.
template <int QR>
void score_block(const float* q, int64_t head_dim, const float* kt, float scale, float* s, int64_t s_stride) {
  __m256 acc[2 * QR];  // one dimension: GCC keeps it in registers (a 2-D array spills)
#pragma GCC unroll 12
  for (int i = 0; i < 2 * QR; ++i) acc[i] = _mm256_setzero_ps();
  for (int64_t d = 0; d < head_dim; ++d) {
    const __m256 k0 = _mm256_loadu_ps(kt + d * kTile), k1 = _mm256_loadu_ps(kt + d * kTile + 8);
#pragma GCC unroll 8
    for (int r = 0; r < QR; ++r) {
      const __m256 b = _mm256_broadcast_ss(q + r * head_dim + d);
      acc[2 * r] = _mm256_fmadd_ps(b, k0, acc[2 * r]);
      acc[2 * r + 1] = _mm256_fmadd_ps(b, k1, acc[2 * r + 1]);
    }
  }
  const __m256 vs = _mm256_set1_ps(scale);
#pragma GCC unroll 8
  for (int r = 0; r < QR; ++r) {
    _mm256_storeu_ps(s + r * s_stride, _mm256_mul_ps(acc[2 * r], vs));
    _mm256_storeu_ps(s + r * s_stride + 8, _mm256_mul_ps(acc[2 * r + 1], vs));
  }
}

// o_r[0 .. 8 NV) += sum_{p < n} w[r * w_stride + p] * row p's values [d, d + 8 NV) for r < QR,
// in order of p.
template <int QR, int NV, class Rows>
void value_block(const float* w, int64_t w_stride, const Rows& rows, int64_t d, int64_t n, float* const* o) {
  __m256 acc[QR * NV];  // one dimension: GCC keeps it in registers
#pragma GCC unroll 12
  for (int i = 0; i < QR * NV; ++i) acc[i] = _mm256_loadu_ps(o[i / NV] + 8 * (i % NV));
  for (int64_t p = 0; p < n; ++p) {
    __m256 x[NV];
#pragma GCC unroll 2
    for (int j = 0; j < NV; ++j) x[j] = rows(p, d + 8 * j);
#pragma GCC unroll 8
    for (int r = 0; r < QR; ++r) {
      const __m256 b = _mm256_broadcast_ss(w + r * w_stride + p);
#pragma GCC unroll 2
      for (int j = 0; j < NV; ++j) acc[r * NV + j] = _mm256_fmadd_ps(b, x[j], acc[r * NV + j]);
    }
  }
#pragma GCC unroll 12
  for (int i = 0; i < QR * NV; ++i) _mm256_storeu_ps(o[i / NV] + 8 * (i % NV), acc[i]);
}

template <int NV, class Rows>
void value_rows(int qr, const float* w, int64_t w_stride, const Rows& rows, int64_t d, int64_t n, float* const* o) {
  switch (qr) {
    case 1: value_block<1, NV>(w, w_stride, rows, d, n, o); break;
    case 2: value_block<2, NV>(w, w_stride, rows, d, n, o); break;
    case 3: value_block<3, NV>(w, w_stride, rows, d, n, o); break;
    case 4: value_block<4, NV>(w, w_stride, rows, d, n, o); break;
    case 5: value_block<5, NV>(w, w_stride, rows, d, n, o); break;
    default: value_block<6, NV>(w, w_stride, rows, d, n, o); break;
  }
}

void score_rows(int qr, const float* q, int64_t head_dim, const float* kt, float scale, float* s, int64_t s_stride) {
  switch (qr) {
    case 1: score_block<1>(q, head_dim, kt, scale, s, s_stride); break;
    case 2: score_block<2>(q, head_dim, kt, scale, s, s_stride); break;
    case 3: score_block<3>(q, head_dim, kt, scale, s, s_stride); break;
    case 4: score_block<4>(q, head_dim, kt, scale, s, s_stride); break;
    case 5: score_block<5>(q, head_dim, kt, scale, s, s_stride); break;
    default: score_block<6>(q, head_dim, kt, scale, s, s_stride); break;
  }
}

// The size of the register block of queries that starts at r of n: the blocks are as even as
// possible (8 queries as 4 + 4, not 6 + 2: a block of 2 has too few accumulators to hide the
// FMA latency).
int register_block(int64_t r, int64_t n) {
  const int64_t blocks = (n - r + kRegisterQueries - 1) / kRegisterQueries;
  return static_cast<int>((n - r + blocks - 1) / blocks);
}

// One block of up to kAttentionQueryBlock queries (flattened (token, head) indices r0 ..).
struct QueryBlock {
  int64_t n = 0;                                // queries
  int64_t n_kv[kAttentionQueryBlock] = {};      // rows each query sees
  float* out[kAttentionQueryBlock] = {};        // each query's output row
  const float* sink[kAttentionQueryBlock] = {};  // each query's sink logit, or null
  int64_t max_kv = 0;
  // Some query of [r, r + qr) sees a row from p0 on.
  bool sees(int64_t r, int qr, int64_t p0) const {
    for (int64_t i = r; i < r + qr; ++i) {
      if (n_kv[i] > p0) return true;
    }
    return false;
  }
};

template <KvType K, KvType V>
class TiledAttention {
 public:
  TiledAttention(const KvRows& k, const KvRows& v, int64_t head_dim, float scale, float softcap, float* scratch)
      : k_(k, head_dim),
        v_(v, head_dim),
        head_dim_(head_dim),
        scale_(scale),
        softcap_(softcap),
        wide_(active_simd_level() >= SimdLevel::Avx512) {
    q_ = scratch;
    rows_ = q_ + kAttentionQueryBlock * head_dim;
    kt_ = rows_ + kTile * head_dim;
    s_ = kt_ + kTile * head_dim;
  }

  void run(const float* const* q, const QueryBlock& b) {
    load_queries(q, b.n);
    const int64_t stride = (b.max_kv + 15) / 16 * 16;
    scores(b, stride);
    weights(b, stride);
    values(b, stride);
  }

 private:
  // The block's queries, rounded to F16 when K is F16 (llama.cpp's F16 numerics).
  void load_queries(const float* const* q, int64_t n) {
    for (int64_t r = 0; r < n; ++r) {
      float* dst = q_ + r * head_dim_;
      for (int64_t d = 0; d < head_dim_; d += 8) {
        const __m256 x = _mm256_loadu_ps(q[r] + d);
        _mm256_storeu_ps(dst + d, K == KvType::F16 ? round_to_fp16x8(x) : x);
      }
    }
  }

  void scores(const QueryBlock& b, int64_t stride) {
    for (int64_t p0 = 0; p0 < b.max_kv; p0 += kTile) {
      const int64_t n = std::min(kTile, b.max_kv - p0), n16 = (n + 15) / 16 * 16;
      const uint8_t* const* heads = k_.tile(p0, n, b.max_kv);
      if constexpr (K == KvType::F16) {
        transpose_tile(F16Rows{heads}, n, n16, head_dim_, kt_);
      } else {
        decode_rows<K>(heads, n, head_dim_, rows_);
        transpose_tile(F32Rows{rows_, head_dim_}, n, n16, head_dim_, kt_);
      }
      for (int64_t r = 0, qr = 0; r < b.n; r += qr) {
        qr = register_block(r, b.n);
        if (!b.sees(r, qr, p0)) continue;
        if (wide_) {
          float* s = s_ + r * stride + p0;
          tiled_scores_avx512(static_cast<int>(qr), q_ + r * head_dim_, head_dim_, kt_, n16, scale_, s, stride);
          continue;
        }
        for (int64_t j = 0; j < n16; j += 16) {
          score_rows(qr, q_ + r * head_dim_, head_dim_, kt_ + j, scale_, s_ + r * stride + p0 + j, stride);
        }
      }
    }
  }

  // Each query's scores over its own rows become softmax weights; the rest of its row is 0.
  void weights(const QueryBlock& b, int64_t stride) {
    for (int64_t r = 0; r < b.n; ++r) {
      float* s = s_ + r * stride;
      const int64_t n = b.n_kv[r];
      if (softcap_ > 0.0f) kernels::softcap(s, n, softcap_);
      if (b.sink[r] != nullptr) {
        softmax_with_sink(s, n, *b.sink[r]);
      } else {
        softmax(s, n);
      }
      if (V == KvType::F16) round_to_fp16(s, n);
      std::memset(s + n, 0, static_cast<size_t>(stride - n) * sizeof(float));
    }
  }

  void values(const QueryBlock& b, int64_t stride) {
    for (int64_t r = 0; r < b.n; ++r) std::memset(b.out[r], 0, static_cast<size_t>(head_dim_) * sizeof(float));
    for (int64_t p0 = 0; p0 < b.max_kv; p0 += kTile) {
      const int64_t n = std::min(kTile, b.max_kv - p0);
      const uint8_t* const* heads = v_.tile(p0, n, b.max_kv);
      if constexpr (V == KvType::F16) {
        values_of_tile(b, stride, p0, n, F16Rows{heads});
      } else {
        decode_rows<V>(heads, n, head_dim_, rows_);
        values_of_tile(b, stride, p0, n, F32Rows{rows_, head_dim_});
      }
    }
  }

  // Adds the terms of the tile's n rows from p0 to the outputs of the queries that see them.
  template <class Rows>
  void values_of_tile(const QueryBlock& b, int64_t stride, int64_t p0, int64_t n, const Rows& rows) {
    float* o[kRegisterQueries];
    for (int64_t r = 0, qr = 0; r < b.n; r += qr) {
      qr = register_block(r, b.n);
      if (!b.sees(r, qr, p0)) continue;
      const float* w = s_ + r * stride + p0;
      int64_t d = 0;
      if (wide_) {
        for (int i = 0; i < qr; ++i) o[i] = b.out[r + i];
        if constexpr (std::is_same_v<Rows, F16Rows>) {
          d = tiled_values_f16_avx512(static_cast<int>(qr), w, stride, rows.heads, head_dim_, n, o);
        } else {
          d = tiled_values_f32_avx512(static_cast<int>(qr), w, stride, rows.rows, head_dim_, n, o);
        }
      }
      for (; d + 16 <= head_dim_; d += 16) {
        for (int i = 0; i < qr; ++i) o[i] = b.out[r + i] + d;
        value_rows<2>(qr, w, stride, rows, d, n, o);
      }
      if (d < head_dim_) {
        for (int i = 0; i < qr; ++i) o[i] = b.out[r + i] + d;
        value_rows<1>(qr, w, stride, rows, d, n, o);
      }
    }
  }

  TileReader<K> k_;
  TileReader<V> v_;
  int64_t head_dim_;
  float scale_, softcap_;
  bool wide_;  // AVX-512 register blocks (twice the lanes; the same bits)
  float* q_;     // [kAttentionQueryBlock][head_dim]
  float* rows_;  // [kTile][head_dim]: a tile's decoded K or V rows
  float* kt_;    // [head_dim][kTile]: the K tile transposed
  float* s_;     // [queries][stride]: scores, then weights
};

template <KvType K, KvType V>
void run_tiled(const AttentionQueries& a, const KvRows& k, const KvRows& v, int64_t head_dim, float scale,
               float softcap, float* scratch) {
  TiledAttention<K, V> attention(k, v, head_dim, scale, softcap, scratch);
  const int64_t total = a.n_tok * a.n_head;
  const float* q[kAttentionQueryBlock];
  QueryBlock b;
  for (int64_t r0 = 0; r0 < total; r0 += kAttentionQueryBlock) {
    b.n = std::min(kAttentionQueryBlock, total - r0);
    b.max_kv = 0;
    for (int64_t r = 0; r < b.n; ++r) {
      const int64_t j = (r0 + r) / a.n_head, i = (r0 + r) % a.n_head;
      q[r] = a.q + j * a.q_token_stride + i * a.q_stride;
      b.out[r] = a.out + j * a.out_token_stride + i * a.out_stride;
      b.sink[r] = a.sinks ? a.sinks + i : nullptr;
      b.n_kv[r] = a.n_kv[j];
      b.max_kv = std::max(b.max_kv, a.n_kv[j]);
    }
    attention.run(q, b);
  }
}

template <KvType K>
void run_for_v(const AttentionQueries& a, const KvRows& k, const KvRows& v, int64_t head_dim, float scale,
               float softcap, float* scratch) {
  switch (v.type) {
    case KvType::F16: run_tiled<K, KvType::F16>(a, k, v, head_dim, scale, softcap, scratch); break;
    case KvType::Q8_0: run_tiled<K, KvType::Q8_0>(a, k, v, head_dim, scale, softcap, scratch); break;
    case KvType::NF4: run_tiled<K, KvType::NF4>(a, k, v, head_dim, scale, softcap, scratch); break;
    case KvType::Q4_0:
    case KvType::Int4: run_tiled<K, KvType::Q4_0>(a, k, v, head_dim, scale, softcap, scratch); break;
  }
}

}  // namespace

void attention_tiled_avx2(const AttentionQueries& a, const KvRows& k, const KvRows& v, int64_t head_dim, float scale,
                          float softcap, float* scratch) {
  switch (k.type) {
    case KvType::F16: run_for_v<KvType::F16>(a, k, v, head_dim, scale, softcap, scratch); break;
    case KvType::Q8_0: run_for_v<KvType::Q8_0>(a, k, v, head_dim, scale, softcap, scratch); break;
    case KvType::NF4: run_for_v<KvType::NF4>(a, k, v, head_dim, scale, softcap, scratch); break;
    case KvType::Q4_0:
    case KvType::Int4: run_for_v<KvType::Q4_0>(a, k, v, head_dim, scale, softcap, scratch); break;
  }
}

}  // namespace inferscope::kernels::detail
