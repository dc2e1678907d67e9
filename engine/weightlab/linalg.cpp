#include "engine/weightlab/linalg.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/core/thread_pool.h"

namespace inferscope {
namespace {

constexpr int64_t kTile = 64;

// y[0..n) += a * x[0..n)
inline void axpy(float* y, float a, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

}  // namespace

std::vector<float> hessian(const float* x, int64_t n, int64_t cols, ThreadPool& pool) {
  std::vector<float> h(static_cast<size_t>(cols * cols), 0.0f);
  const float scale = n > 0 ? 2.0f / static_cast<float>(n) : 0.0f;
  // Row tiles of the upper triangle, dealt round-robin; each tile reads every input row once.
  const int64_t n_tiles = (cols + kTile - 1) / kTile;
  pool.run([&](int ith, int nth) {
    for (int64_t tile = ith; tile < n_tiles; tile += nth) {
      const int64_t i0 = tile * kTile, i1 = std::min(cols, i0 + kTile);
      for (int64_t t = 0; t < n; ++t) {
        const float* xt = x + t * cols;
        for (int64_t i = i0; i < i1; ++i) {
          if (xt[i] != 0.0f) axpy(h.data() + i * cols + i, xt[i], xt + i, cols - i);
        }
      }
      for (int64_t i = i0; i < i1; ++i) {
        for (int64_t j = i; j < cols; ++j) h[static_cast<size_t>(i * cols + j)] *= scale;
      }
    }
  });
  for (int64_t i = 0; i < cols; ++i) {
    for (int64_t j = 0; j < i; ++j) h[static_cast<size_t>(i * cols + j)] = h[static_cast<size_t>(j * cols + i)];
  }
  return h;
}

Status cholesky_upper(std::vector<float>& a, int64_t n) {
  // Left-looking over column tiles [j0, j1): row i of the tile is A[i][c..j1) minus
  // sum_k<i R[k][i] R[k][c..j1), c = max(i, j0). rt holds R transposed, so that column i of R
  // (R[k][i], k < i) is a contiguous row.
  std::vector<float> rt(static_cast<size_t>(n * n), 0.0f);
  std::vector<float> acc(kTile);
  for (int64_t j0 = 0; j0 < n; j0 += kTile) {
    const int64_t j1 = std::min(n, j0 + kTile);
    for (int64_t i = 0; i < j1; ++i) {
      const int64_t c0 = std::max(i, j0), w = j1 - c0;
      float* row = a.data() + i * n;
      std::copy(row + c0, row + j1, acc.begin());
      const float* col_i = rt.data() + i * n;
      for (int64_t k = 0; k < i; ++k) {
        if (col_i[k] != 0.0f) axpy(acc.data(), -col_i[k], a.data() + k * n + c0, w);
      }
      int64_t first = 0;
      if (c0 == i) {
        if (!(acc[0] > 0.0f) || !std::isfinite(acc[0])) {
          return Status::error("matrix is not positive definite (pivot " + std::to_string(i) + ")");
        }
        row[i] = std::sqrt(acc[0]);
        rt[static_cast<size_t>(i * n + i)] = row[i];
        first = 1;
      }
      const float inv = 1.0f / row[i];
      for (int64_t c = first; c < w; ++c) {
        row[c0 + c] = acc[static_cast<size_t>(c)] * inv;
        rt[static_cast<size_t>((c0 + c) * n + i)] = row[c0 + c];
      }
    }
  }
  return Status::ok();
}

std::vector<float> invert_upper(const std::vector<float>& r, int64_t n, ThreadPool& pool) {
  std::vector<float> v(static_cast<size_t>(n * n), 0.0f);
  const int64_t n_tiles = (n + kTile - 1) / kTile;
  // Column tile [j0, j1) of V solves R V = I there, rows from the bottom up: V[i][tile] =
  // (e_i - sum_{k>i} R[i][k] V[k][tile]) / R[i][i]; rows below j1 are 0. Tiles are independent.
  pool.run([&](int ith, int nth) {
    std::vector<float> tile(static_cast<size_t>(n * kTile));
    for (int64_t t = ith; t < n_tiles; t += nth) {
      const int64_t j0 = t * kTile, j1 = std::min(n, j0 + kTile), w = j1 - j0;
      for (int64_t i = j1 - 1; i >= 0; --i) {
        float* out = tile.data() + i * kTile;
        std::fill(out, out + w, 0.0f);
        if (i >= j0) out[i - j0] = 1.0f;
        const float* ri = r.data() + i * n;
        for (int64_t k = i + 1; k < j1; ++k) {
          if (ri[k] != 0.0f) axpy(out, -ri[k], tile.data() + k * kTile, w);
        }
        const float inv = 1.0f / ri[i];
        for (int64_t c = 0; c < w; ++c) {
          out[c] *= inv;
          v[static_cast<size_t>(i * n + j0 + c)] = out[c];
        }
      }
    }
  });
  return v;
}

Result<std::vector<float>> inverse_cholesky_upper(const std::vector<float>& h, int64_t n, ThreadPool& pool) {
  std::vector<float> g(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) g[static_cast<size_t>(i * n + j)] = h[static_cast<size_t>((n - 1 - i) * n + (n - 1 - j))];
  }
  Status st = cholesky_upper(g, n);
  if (!st) return Result<std::vector<float>>::error(st.message());
  const std::vector<float> v = invert_upper(g, n, pool);
  // U[a][b] = V[n-1-b][n-1-a] (b >= a).
  std::vector<float> u(static_cast<size_t>(n * n), 0.0f);
  for (int64_t a = 0; a < n; ++a) {
    for (int64_t b = a; b < n; ++b) u[static_cast<size_t>(a * n + b)] = v[static_cast<size_t>((n - 1 - b) * n + (n - 1 - a))];
  }
  return u;
}

}  // namespace inferscope
