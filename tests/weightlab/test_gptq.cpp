// GPTQ on a single linear layer with calibration inputs of correlated columns: its output error
// is below round-to-nearest's in every target type, it matches a direct double-precision
// implementation of the update rule (the inverse Hessian updated after each column, no
// Cholesky factor, no lazy batches), and act-order changes the result while still beating RTN.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "engine/core/thread_pool.h"
#include "engine/weightlab/gptq.h"
#include "engine/weightlab/linalg.h"
#include "kernels/cpu/block_grid.h"
#include "kernels/cpu/dequantize.h"
#include "kernels/cpu/quantize.h"

namespace inferscope {
namespace {

using kernels::GgmlType;

constexpr int64_t kRows = 24, kCols = 256, kTokens = 400;

struct Layer {
  std::vector<float> w;  // [kRows][kCols]
  std::vector<float> x;  // [kTokens][kCols]
  std::vector<float> h;
};

Layer random_layer(uint32_t seed, ThreadPool& pool) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  Layer l;
  l.w.resize(kRows * kCols);
  for (float& v : l.w) v = 0.05f * dist(rng);
  l.x.resize(kTokens * kCols);
  for (int64_t t = 0; t < kTokens; ++t) {
    float carry = 0;
    for (int64_t c = 0; c < kCols; ++c) {
      carry = 0.7f * carry + dist(rng);
      // A few channels much larger, as in real activations.
      l.x[static_cast<size_t>(t * kCols + c)] = carry * (c % 37 == 0 ? 8.0f : 1.0f);
    }
  }
  l.h = hessian(l.x.data(), kTokens, kCols, pool);
  return l;
}

// sum over tokens and rows of ((W - W_hat) x)^2
double output_error(const Layer& l, const std::vector<float>& w_hat) {
  double sum = 0;
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t t = 0; t < kTokens; ++t) {
      double dot = 0;
      for (int64_t c = 0; c < kCols; ++c) {
        dot += (static_cast<double>(l.w[r * kCols + c]) - w_hat[r * kCols + c]) * l.x[t * kCols + c];
      }
      sum += dot * dot;
    }
  }
  return sum;
}

std::vector<float> decode(GgmlType type, const std::vector<uint8_t>& bytes) {
  std::vector<float> out(kRows * kCols);
  const int64_t rb = kernels::row_bytes(type, kCols);
  for (int64_t r = 0; r < kRows; ++r) kernels::dequantize_row(type, bytes.data() + r * rb, out.data() + r * kCols, kCols);
  return out;
}

std::vector<uint8_t> rtn(GgmlType type, const Layer& l) {
  const int64_t rb = kernels::row_bytes(type, kCols);
  std::vector<uint8_t> out(static_cast<size_t>(kRows * rb));
  for (int64_t r = 0; r < kRows; ++r) kernels::quantize_row(type, l.w.data() + r * kCols, out.data() + r * rb, kCols);
  return out;
}

std::vector<uint8_t> gptq(GgmlType type, const Layer& l, const GptqOptions& o, ThreadPool& pool) {
  auto f = gptq_factor(l.h, kCols, o, pool);
  EXPECT_TRUE(f) << f.message();
  std::vector<float> w = l.w;
  std::vector<uint8_t> out(static_cast<size_t>(kRows * kernels::row_bytes(type, kCols)));
  gptq_quantize_rows(type, *f, o, w.data(), kRows, out.data());
  return out;
}

// The update rule as the paper states it, in double: after column c is quantized, the error
// (w_c - q_c) / [H^-1]_cc moves the later columns by -err [H^-1]_c,k, and H^-1 loses column c
// (H^-1 - H^-1[:,c] H^-1[c,:] / H^-1_cc).
std::vector<uint8_t> reference_gptq(GgmlType type, const Layer& l, double damp) {
  const int64_t n = kCols;
  std::vector<double> h(l.h.begin(), l.h.end());
  double mean = 0;
  for (int64_t i = 0; i < n; ++i) mean += h[i * n + i];
  mean /= n;
  for (int64_t i = 0; i < n; ++i) h[i * n + i] += damp * mean;
  // Gauss-Jordan inverse.
  std::vector<double> a = h, inv(n * n, 0.0);
  for (int64_t i = 0; i < n; ++i) inv[i * n + i] = 1;
  for (int64_t p = 0; p < n; ++p) {
    const double d = a[p * n + p];
    for (int64_t j = 0; j < n; ++j) {
      a[p * n + j] /= d;
      inv[p * n + j] /= d;
    }
    for (int64_t i = 0; i < n; ++i) {
      if (i == p) continue;
      const double m = a[i * n + p];
      for (int64_t j = 0; j < n; ++j) {
        a[i * n + j] -= m * a[p * n + j];
        inv[i * n + j] -= m * inv[p * n + j];
      }
    }
  }
  const int64_t bs = kernels::type_info(type).block_size;
  const int64_t rb = kernels::row_bytes(type, n), bb = kernels::row_bytes(type, bs);
  std::vector<uint8_t> out(static_cast<size_t>(kRows * rb));
  for (int64_t r = 0; r < kRows; ++r) {
    std::vector<double> w(l.w.begin() + r * n, l.w.begin() + (r + 1) * n);
    std::vector<double> hinv = inv;
    for (int64_t c = 0; c < n; ++c) {
      uint8_t* block = out.data() + r * rb + (c / bs) * bb;
      if (c % bs == 0) {
        std::vector<float> cur(w.begin() + c, w.begin() + c + bs);
        kernels::quantize_row(type, cur.data(), block, bs);
      }
      const kernels::ElementGrid g = kernels::element_grid(type, block, static_cast<int>(c % bs));
      const int q = g.nearest(static_cast<float>(w[c]));
      kernels::set_element_quant(type, block, static_cast<int>(c % bs), q);
      const double err = (w[c] - g.value(q)) / hinv[c * n + c];
      for (int64_t k = c + 1; k < n; ++k) w[k] -= err * hinv[c * n + k];
      const double d = hinv[c * n + c];
      for (int64_t i = c + 1; i < n; ++i) {
        for (int64_t j = c + 1; j < n; ++j) hinv[i * n + j] -= hinv[i * n + c] * hinv[c * n + j] / d;
      }
    }
  }
  return out;
}

class Gptq : public ::testing::TestWithParam<GgmlType> {};

TEST_P(Gptq, OutputErrorIsBelowRoundToNearest) {
  ThreadPool pool(2);
  const GgmlType type = GetParam();
  const Layer l = random_layer(11, pool);
  const double plain = output_error(l, decode(type, rtn(type, l)));
  const double ours = output_error(l, decode(type, gptq(type, l, {}, pool)));
  EXPECT_LT(ours, 0.9 * plain) << kernels::type_name(type) << ": GPTQ " << ours << ", RTN " << plain;
}

TEST_P(Gptq, MatchesTheDirectDoublePrecisionUpdateRule) {
  ThreadPool pool(2);
  const GgmlType type = GetParam();
  const Layer l = random_layer(12, pool);
  const std::vector<float> ours = decode(type, gptq(type, l, {}, pool));
  const std::vector<float> ref = decode(type, reference_gptq(type, l, 0.01));
  int64_t same = 0;
  for (size_t i = 0; i < ours.size(); ++i) same += ours[i] == ref[i] ? 1 : 0;
  // Float against double: a rounding decision that sits on a tie may go the other way.
  EXPECT_GT(static_cast<double>(same) / static_cast<double>(ours.size()), 0.97) << kernels::type_name(type);
  const double e_ours = output_error(l, ours), e_ref = output_error(l, ref);
  EXPECT_NEAR(e_ours / e_ref, 1.0, 0.03) << kernels::type_name(type);
}

INSTANTIATE_TEST_SUITE_P(Types, Gptq,
                         ::testing::Values(GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q8_0, GgmlType::Q3_K,
                                           GgmlType::Q4_K, GgmlType::Q5_K),
                         [](const auto& info) { return std::string(kernels::type_name(info.param)); });

TEST(GptqActOrder, ChangesTheResultAndStillBeatsRoundToNearest) {
  ThreadPool pool(2);
  const Layer l = random_layer(13, pool);
  GptqOptions act;
  act.act_order = true;
  auto f = gptq_factor(l.h, kCols, act, pool);
  ASSERT_TRUE(f);
  // The order is by decreasing H diagonal: the large channels (c % 37 == 0) first.
  EXPECT_EQ(f->order[0] % 37, 0);
  const std::vector<float> plain = decode(GgmlType::Q4_0, gptq(GgmlType::Q4_0, l, {}, pool));
  const std::vector<float> ordered = decode(GgmlType::Q4_0, gptq(GgmlType::Q4_0, l, act, pool));
  EXPECT_NE(plain, ordered);
  EXPECT_LT(output_error(l, ordered), 0.9 * output_error(l, decode(GgmlType::Q4_0, rtn(GgmlType::Q4_0, l))));
}

TEST(GptqDeadColumns, ColumnsWithNoInputAreZeroed) {
  ThreadPool pool(2);
  Layer l = random_layer(14, pool);
  for (int64_t t = 0; t < kTokens; ++t) l.x[t * kCols + 5] = 0.0f;
  l.h = hessian(l.x.data(), kTokens, kCols, pool);
  const std::vector<float> w = decode(GgmlType::Q8_0, gptq(GgmlType::Q8_0, l, {}, pool));
  for (int64_t r = 0; r < kRows; ++r) EXPECT_EQ(w[r * kCols + 5], 0.0f);
}

}  // namespace
}  // namespace inferscope
