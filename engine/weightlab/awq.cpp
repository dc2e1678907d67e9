#include "engine/weightlab/awq.h"

#include <algorithm>
#include <cmath>

#include "engine/core/thread_pool.h"
#include "kernels/cpu/dequantize.h"
#include "kernels/cpu/quantize.h"

namespace inferscope {
namespace {

std::vector<double> mean_abs(const CalibrationInput& input) {
  std::vector<double> m(static_cast<size_t>(input.cols), 0.0);
  for (int64_t t = 0; t < input.n(); ++t) {
    const float* x = input.row(t);
    for (int64_t c = 0; c < input.cols; ++c) m[static_cast<size_t>(c)] += std::fabs(x[c]);
  }
  for (double& v : m) v /= static_cast<double>(std::max<int64_t>(1, input.n()));
  return m;
}

std::vector<float> scales_for(const std::vector<double>& magnitude, double alpha) {
  std::vector<double> s(magnitude.size());
  double lo = INFINITY, hi = 0;
  for (size_t c = 0; c < s.size(); ++c) {
    s[c] = std::pow(std::max(magnitude[c], 1e-8), alpha);
    lo = std::min(lo, s[c]);
    hi = std::max(hi, s[c]);
  }
  const double norm = std::sqrt(lo * hi);
  std::vector<float> out(s.size());
  for (size_t c = 0; c < s.size(); ++c) out[c] = static_cast<float>(std::max(s[c] / norm, 1e-4));
  return out;
}

// W's rows as the model computes with them after scaling: Q(W diag(s)) diag(s)^-1.
std::vector<float> quantized_scaled(const AwqMatrix& m, int64_t cols, const std::vector<float>& s) {
  std::vector<float> out(m.rows.size());
  std::vector<float> scaled(static_cast<size_t>(cols));
  std::vector<uint8_t> bytes(static_cast<size_t>(kernels::row_bytes(m.type, cols)));
  const bool quantized = kernels::type_info(m.type).block_size > 1;
  for (size_t r = 0; r * static_cast<size_t>(cols) < m.rows.size(); ++r) {
    const float* w = m.rows.data() + r * static_cast<size_t>(cols);
    float* y = out.data() + r * static_cast<size_t>(cols);
    for (int64_t c = 0; c < cols; ++c) scaled[static_cast<size_t>(c)] = w[c] * s[static_cast<size_t>(c)];
    if (quantized) {
      kernels::quantize_row(m.type, scaled.data(), bytes.data(), cols);
      kernels::dequantize_row(m.type, bytes.data(), y, cols);
    } else {
      std::copy(scaled.begin(), scaled.end(), y);
    }
    for (int64_t c = 0; c < cols; ++c) y[c] /= s[static_cast<size_t>(c)];
  }
  return out;
}

double output_error(const CalibrationInput& input, const std::vector<int64_t>& tokens,
                    const std::vector<AwqMatrix>& matrices, const std::vector<float>& s) {
  const int64_t cols = input.cols;
  double sum = 0;
  for (const AwqMatrix& m : matrices) {
    const std::vector<float> q = quantized_scaled(m, cols, s);
    std::vector<float> diff(static_cast<size_t>(cols));
    for (size_t r = 0; r * static_cast<size_t>(cols) < m.rows.size(); ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const size_t i = r * static_cast<size_t>(cols) + static_cast<size_t>(c);
        diff[static_cast<size_t>(c)] = m.rows[i] - q[i];
      }
      for (int64_t t : tokens) {
        const float* x = input.row(t);
        double dot = 0;
        for (int64_t c = 0; c < cols; ++c) dot += static_cast<double>(diff[static_cast<size_t>(c)]) * x[c];
        sum += dot * dot;
      }
    }
  }
  return sum;
}

}  // namespace

std::vector<int64_t> evenly_spaced(int64_t n, int64_t max) {
  std::vector<int64_t> out;
  const int64_t count = std::min(n, std::max<int64_t>(1, max));
  for (int64_t i = 0; i < count; ++i) out.push_back(i * n / count);
  return out;
}

AwqChoice awq_search(const CalibrationInput& input, const std::vector<AwqMatrix>& matrices, const AwqOptions& options,
                     ThreadPool& pool) {
  const std::vector<double> magnitude = mean_abs(input);
  const std::vector<int64_t> tokens = evenly_spaced(input.n(), options.max_tokens);
  const int points = std::max(1, options.grid) + 1;
  std::vector<double> errors(static_cast<size_t>(points));
  pool.run([&](int ith, int nth) {
    for (int p = ith; p < points; p += nth) {
      const double alpha = static_cast<double>(p) / (points - 1);
      errors[static_cast<size_t>(p)] = output_error(input, tokens, matrices, scales_for(magnitude, alpha));
    }
  });
  const auto best = std::min_element(errors.begin(), errors.end()) - errors.begin();
  AwqChoice choice;
  choice.alpha = static_cast<double>(best) / (points - 1);
  choice.scales = scales_for(magnitude, choice.alpha);
  choice.error = errors[static_cast<size_t>(best)];
  choice.error_plain = errors[0];
  return choice;
}

}  // namespace inferscope
