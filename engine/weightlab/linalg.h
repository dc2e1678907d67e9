// The dense linear algebra of the weight lab, in float on row-major n x n matrices: the layer
// Hessian from calibration rows, and the upper Cholesky factor of its inverse that GPTQ updates
// with. Written for n up to a few thousand (a 1.1B model's ffn_down: 5632): column tiles keep
// the inner loops contiguous, vectorizable and in cache.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/core/status.h"

namespace inferscope {

class ThreadPool;

// H = 2/n * X^T X over the rows of x ([n][cols]); [cols][cols].
std::vector<float> hessian(const float* x, int64_t n, int64_t cols, ThreadPool& pool);

// In place: the upper triangle of a (symmetric positive definite, [n][n]) becomes R with
// A = R^T R; the strict lower triangle is left as it was. Fails (naming the pivot) when A is not
// positive definite.
Status cholesky_upper(std::vector<float>& a, int64_t n);

// The inverse of an upper-triangular R (its upper triangle read), upper triangular; [n][n].
std::vector<float> invert_upper(const std::vector<float>& r, int64_t n, ThreadPool& pool);

// U upper triangular with U^T U = H^-1, for symmetric positive definite H ([n][n]): GPTQ's
// "Cholesky factor of H^-1". Computed without forming H^-1: with J the reversal of the indices,
// J H J = R^T R gives H^-1 = (J R^-1 J)(J R^-1 J)^T, so U = J R^-T J.
Result<std::vector<float>> inverse_cholesky_upper(const std::vector<float>& h, int64_t n, ThreadPool& pool);

}  // namespace inferscope
