// AVX-512 register blocks of the tiled attention kernel (attention_tiled_avx2.cpp), for CPUs
// with full-width 512-bit FMA units: twice the positions (scores) or dimensions (values) per
// instruction. Every lane does the AVX2 blocks' operations in the same order (one FMA per
// dimension for a score, per position for a value), so the outputs are the same bits.
// GCC 12 reports its own _mm512_undefined_* idiom (`__Y = __Y`) as uninitialized once inlined.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "kernels/cpu/attention.h"

namespace inferscope::kernels::detail {

namespace {

constexpr int64_t kTile = kAttentionTile;

// s[r * s_stride + j] = scale * q_r . k_j for r < QR and the 16 V positions j of kt
// (kt[d * kTile + j]), each sum along d in order.
template <int QR, int V>
void score_block(const float* q, int64_t head_dim, const float* kt, float scale, float* s, int64_t s_stride) {
  __m512 acc[QR * V];
#pragma GCC unroll 12
  for (int i = 0; i < QR * V; ++i) acc[i] = _mm512_setzero_ps();
  for (int64_t d = 0; d < head_dim; ++d) {
    __m512 k[V];
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) k[v] = _mm512_loadu_ps(kt + d * kTile + 16 * v);
#pragma GCC unroll 8
    for (int r = 0; r < QR; ++r) {
      const __m512 b = _mm512_set1_ps(q[r * head_dim + d]);
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) acc[r * V + v] = _mm512_fmadd_ps(b, k[v], acc[r * V + v]);
    }
  }
  const __m512 vs = _mm512_set1_ps(scale);
#pragma GCC unroll 12
  for (int i = 0; i < QR * V; ++i) _mm512_storeu_ps(s + (i / V) * s_stride + 16 * (i % V), _mm512_mul_ps(acc[i], vs));
}

template <int V>
void score_rows(int qr, const float* q, int64_t head_dim, const float* kt, float scale, float* s, int64_t s_stride) {
  switch (qr) {
    case 1: score_block<1, V>(q, head_dim, kt, scale, s, s_stride); break;
    case 2: score_block<2, V>(q, head_dim, kt, scale, s, s_stride); break;
    case 3: score_block<3, V>(q, head_dim, kt, scale, s, s_stride); break;
    case 4: score_block<4, V>(q, head_dim, kt, scale, s, s_stride); break;
    case 5: score_block<5, V>(q, head_dim, kt, scale, s, s_stride); break;
    default: score_block<6, V>(q, head_dim, kt, scale, s, s_stride); break;
  }
}

// 16 values at dimension d of row p: decoded F32 rows, or F16 rows converted as read.
struct F32Rows {
  const float* rows;
  int64_t head_dim;
  __m512 operator()(int64_t p, int64_t d) const { return _mm512_loadu_ps(rows + p * head_dim + d); }
};
struct F16Rows {
  const uint8_t* const* heads;
  __m512 operator()(int64_t p, int64_t d) const {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(heads[p] + 2 * d)));
  }
};

// o_r[d .. d + 16 V) += sum_{p < n} w[r * w_stride + p] * row p's values there, in order of p.
template <int QR, int V, class Rows>
void value_block(const float* w, int64_t w_stride, const Rows& rows, int64_t d, int64_t n, float* const* o) {
  __m512 acc[QR * V];
#pragma GCC unroll 12
  for (int i = 0; i < QR * V; ++i) acc[i] = _mm512_loadu_ps(o[i / V] + d + 16 * (i % V));
  for (int64_t p = 0; p < n; ++p) {
    __m512 x[V];
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) x[v] = rows(p, d + 16 * v);
#pragma GCC unroll 8
    for (int r = 0; r < QR; ++r) {
      const __m512 b = _mm512_set1_ps(w[r * w_stride + p]);
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) acc[r * V + v] = _mm512_fmadd_ps(b, x[v], acc[r * V + v]);
    }
  }
#pragma GCC unroll 12
  for (int i = 0; i < QR * V; ++i) _mm512_storeu_ps(o[i / V] + d + 16 * (i % V), acc[i]);
}

template <int V, class Rows>
void value_rows(int qr, const float* w, int64_t w_stride, const Rows& rows, int64_t d, int64_t n, float* const* o) {
  switch (qr) {
    case 1: value_block<1, V>(w, w_stride, rows, d, n, o); break;
    case 2: value_block<2, V>(w, w_stride, rows, d, n, o); break;
    case 3: value_block<3, V>(w, w_stride, rows, d, n, o); break;
    case 4: value_block<4, V>(w, w_stride, rows, d, n, o); break;
    case 5: value_block<5, V>(w, w_stride, rows, d, n, o); break;
    default: value_block<6, V>(w, w_stride, rows, d, n, o); break;
  }
}

// The dimensions [0, done) of head_dim, 32 then 16 at a time.
template <class Rows>
int64_t values_16(int qr, const float* w, int64_t w_stride, const Rows& rows, int64_t head_dim, int64_t n,
                  float* const* o) {
  int64_t d = 0;
  for (; d + 32 <= head_dim; d += 32) value_rows<2>(qr, w, w_stride, rows, d, n, o);
  if (d + 16 <= head_dim) {
    value_rows<1>(qr, w, w_stride, rows, d, n, o);
    d += 16;
  }
  return d;
}

}  // namespace

void tiled_scores_avx512(int qr, const float* q, int64_t head_dim, const float* kt, int64_t n16, float scale, float* s,
                         int64_t s_stride) {
  int64_t j = 0;
  for (; j + 32 <= n16; j += 32) score_rows<2>(qr, q, head_dim, kt + j, scale, s + j, s_stride);
  if (j < n16) score_rows<1>(qr, q, head_dim, kt + j, scale, s + j, s_stride);
}

int64_t tiled_values_f32_avx512(int qr, const float* w, int64_t w_stride, const float* rows, int64_t head_dim,
                                int64_t n, float* const* o) {
  return values_16(qr, w, w_stride, F32Rows{rows, head_dim}, head_dim, n, o);
}

int64_t tiled_values_f16_avx512(int qr, const float* w, int64_t w_stride, const uint8_t* const* heads,
                                int64_t head_dim, int64_t n, float* const* o) {
  return values_16(qr, w, w_stride, F16Rows{heads}, head_dim, n, o);
}

}  // namespace inferscope::kernels::detail
