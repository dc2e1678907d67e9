// Dot products of one query vector against many stored vectors: the scoring step of the semantic
// cache (cosine similarity of unit vectors is their dot product).
//
// Every SIMD level gives bit-identical results, so a similarity right at the cache threshold is
// decided the same way on every machine: the sum is taken in one fixed order, the one
// dot_reference spells out (16 running lane sums, element i into lane i % 16, then a pairwise
// tree 16 -> 8 -> 4 -> 2 -> 1), with a separate multiply and add (no fused multiply-add).
#pragma once

#include <cstddef>

namespace inferscope::kernels {

// a, b: [dim] floats, any alignment; dim may be 0 (the result is then 0).
float dot(const float* a, const float* b, size_t dim);

// scores[r] = dot(query, rows + r * dim) for r in [0, n_rows).
// query: [dim]; rows: [n_rows, dim] row-major and contiguous; scores: [n_rows]. Any alignment.
// Dispatches on active_simd_level().
void dot_rows(const float* query, const float* rows, size_t n_rows, size_t dim, float* scores);

// The portable definition of the summation order above; what every SIMD variant must equal.
float dot_reference(const float* a, const float* b, size_t dim);

namespace detail {
float dot_avx2(const float* a, const float* b, size_t dim);
float dot_avx512(const float* a, const float* b, size_t dim);
void dot_rows_avx2(const float* query, const float* rows, size_t n_rows, size_t dim, float* scores);
void dot_rows_avx512(const float* query, const float* rows, size_t n_rows, size_t dim, float* scores);
}  // namespace detail

}  // namespace inferscope::kernels
