#include "engine/weightlab/gptq.h"

#include <algorithm>
#include <numeric>

#include "engine/weightlab/linalg.h"
#include "kernels/cpu/block_grid.h"
#include "kernels/cpu/quantize.h"

namespace inferscope {
namespace {

using kernels::GgmlType;

// Columns of the later-column update done at once (its slice of U stays in cache).
constexpr int64_t kUpdateTile = 512;

inline void axpy(float* y, float a, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

}  // namespace

bool gptq_supports(GgmlType type) { return kernels::has_block_grid(type); }

Result<GptqFactor> gptq_factor(std::vector<float> h, int64_t cols, const GptqOptions& options, ThreadPool& pool) {
  GptqFactor f;
  f.cols = cols;
  f.dead.assign(static_cast<size_t>(cols), 0);
  double mean_diag = 0;
  for (int64_t i = 0; i < cols; ++i) {
    float& d = h[static_cast<size_t>(i * cols + i)];
    if (d == 0.0f) {
      f.dead[static_cast<size_t>(i)] = 1;
      d = 1.0f;
    }
    mean_diag += d;
  }
  mean_diag /= static_cast<double>(std::max<int64_t>(1, cols));
  const float damp = static_cast<float>(options.damp * mean_diag);
  for (int64_t i = 0; i < cols; ++i) h[static_cast<size_t>(i * cols + i)] += damp;

  f.order.resize(static_cast<size_t>(cols));
  std::iota(f.order.begin(), f.order.end(), 0);
  if (options.act_order) {
    std::stable_sort(f.order.begin(), f.order.end(), [&](int64_t a, int64_t b) {
      return h[static_cast<size_t>(a * cols + a)] > h[static_cast<size_t>(b * cols + b)];
    });
    std::vector<float> p(static_cast<size_t>(cols * cols));
    for (int64_t i = 0; i < cols; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        p[static_cast<size_t>(i * cols + j)] = h[static_cast<size_t>(f.order[static_cast<size_t>(i)] * cols +
                                                                     f.order[static_cast<size_t>(j)])];
      }
    }
    h = std::move(p);
  }
  auto u = inverse_cholesky_upper(h, cols, pool);
  if (!u) return Result<GptqFactor>::error("GPTQ: the damped Hessian " + u.status().message() + "; raise --damp");
  f.u = std::move(*u);
  return f;
}

void gptq_quantize_rows(GgmlType type, const GptqFactor& f, const GptqOptions& options, float* w, int64_t n,
                        uint8_t* out) {
  const int64_t cols = f.cols;
  const int64_t bs = kernels::type_info(type).block_size;
  const int64_t block_bytes = kernels::row_bytes(type, bs);
  const int64_t row_bytes = kernels::row_bytes(type, cols);
  const int64_t lazy = options.lazy_block;
  // wp: the rows in quantization order.
  std::vector<float> wp(static_cast<size_t>(n * cols));
  for (int64_t r = 0; r < n; ++r) {
    float* row = w + r * cols;
    for (int64_t c = 0; c < cols; ++c) {
      if (f.dead[static_cast<size_t>(c)]) row[c] = 0.0f;
    }
    for (int64_t j = 0; j < cols; ++j) wp[static_cast<size_t>(r * cols + j)] = row[f.order[static_cast<size_t>(j)]];
    if (options.act_order) kernels::quantize_row(type, row, out + r * row_bytes, cols);
  }
  std::vector<float> err(static_cast<size_t>(n * lazy));
  for (int64_t i1 = 0; i1 < cols; i1 += lazy) {
    const int64_t i2 = std::min(cols, i1 + lazy);
    for (int64_t j = i1; j < i2; ++j) {
      const int64_t c = f.order[static_cast<size_t>(j)];
      const float* uj = f.u.data() + j * cols;
      const float ujj = uj[j];
      for (int64_t r = 0; r < n; ++r) {
        float* row = wp.data() + r * cols;
        uint8_t* block = out + r * row_bytes + (c / bs) * block_bytes;
        // Without act-order j == c: the block's scales from its current weights.
        if (!options.act_order && c % bs == 0) kernels::quantize_row(type, row + j, block, bs);
        const kernels::ElementGrid g = kernels::element_grid(type, block, static_cast<int>(c % bs));
        const int q = g.nearest(row[j]);
        kernels::set_element_quant(type, block, static_cast<int>(c % bs), q);
        const float e = (row[j] - g.value(q)) / ujj;
        err[static_cast<size_t>(r * lazy + (j - i1))] = e;
        axpy(row + j + 1, -e, uj + j + 1, i2 - j - 1);
      }
    }
    // The block's errors on the later columns, a tile of U at a time.
    for (int64_t k0 = i2; k0 < cols; k0 += kUpdateTile) {
      const int64_t k1 = std::min(cols, k0 + kUpdateTile);
      for (int64_t r = 0; r < n; ++r) {
        float* row = wp.data() + r * cols;
        for (int64_t b = 0; b < i2 - i1; ++b) {
          const float e = err[static_cast<size_t>(r * lazy + b)];
          if (e != 0.0f) axpy(row + k0, -e, f.u.data() + (i1 + b) * cols + k0, k1 - k0);
        }
      }
    }
  }
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t j = 0; j < cols; ++j) w[r * cols + f.order[static_cast<size_t>(j)]] = wp[static_cast<size_t>(r * cols + j)];
  }
}

}  // namespace inferscope
