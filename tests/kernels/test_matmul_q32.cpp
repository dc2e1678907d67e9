// Matmul of the 32-block types Q4_1, Q5_0, Q5_1, IQ4_NL and MXFP4 with packed Q8 activations, on
// weight blocks from llama.cpp's files in testdata/quant and, for MXFP4, the 2026 reference's
// tests/data/llama.cpp-2026/gpt-oss-tiny-mxfp4.gguf (plus blocks at the extremes of each format): every SIMD level against the scalar reference, and the reference against a
// double-precision dot of the bit-exact dequantized weights and the dequantized activations.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "kernels/cpu/dequantize.h"
#include "kernels/formats/fp16.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/matmul_internal.h"
#include "tests/support/simd_levels.h"
#include "tests/support/testdata.h"

namespace inferscope::kernels {
namespace {

struct TypeFile {
  GgmlType type;
  const char* file;  // in the shared test data; "tests/..." in the project's
  const char* tensor = "blk.0.ffn_down.weight";
};

constexpr TypeFile kTypeFiles[] = {
    {GgmlType::Q4_1, "quant/q4_1.gguf"},
    {GgmlType::Q5_0, "quant/q5_0.gguf"},
    {GgmlType::Q5_1, "quant/q5_1.gguf"},
    {GgmlType::IQ4_NL, "quant/iq4_nl.gguf"},
    {GgmlType::MXFP4, "tests/data/llama.cpp-2026/gpt-oss-tiny-mxfp4.gguf", "blk.0.ffn_down_exps.weight"}};

constexpr int64_t kRows = 41;
constexpr int64_t kTokenCounts[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 17};
constexpr int64_t kKs[] = {32, 96, 512, 1056};  // 1056: 33 blocks, past a multiple of 16

struct RowRange {
  int64_t begin, end;
};
// A full 32-row panel plus a partial one, and a single row; neither starts at 0.
constexpr RowRange kRanges[] = {{7, kRows}, {13, 14}};

bool has_min(GgmlType t) { return t == GgmlType::Q4_1 || t == GgmlType::Q5_1; }

// The bytes of blk.0.ffn_down.weight of the type's file, which hold enough blocks for
// kRows x 512 values; blocks are self-contained, so any run of them forms rows of any k.
std::vector<uint8_t> file_blocks(const TypeFile& tf) {
  const std::string file = std::string(tf.file).rfind("tests/", 0) == 0
                               ? std::string(INFERSCOPE_SOURCE_DIR) + "/" + tf.file
                               : testing::testdata(tf.file);
  auto f = gguf::File::open(file);
  EXPECT_TRUE(f.is_ok()) << f.message();
  if (!f.is_ok()) return {};
  const gguf::TensorInfo* t = f.value()->find_tensor(tf.tensor);
  EXPECT_NE(t, nullptr);
  if (!t) return {};
  EXPECT_EQ(t->type, tf.type);
  return {t->data, t->data + t->n_bytes};
}

// Rows 3 and 4 become the extremes of the format in every block: all quants at their maximum
// (nibbles 15, high bits set) and at their minimum, with d = 1 and m = -1 (GGUF-FORMATS.md 3.x
// block layouts: f16 d, then f16 m for Q4_1 / Q5_1, then the 4 qh bytes and 16 qs bytes; MXFP4:
// the E8M0 byte 128, a factor of 1, then the 16 qs bytes).
void write_extreme_rows(GgmlType type, int64_t k, uint8_t* weights) {
  const int64_t block_bytes = type_info(type).type_size;
  const int64_t header = type == GgmlType::MXFP4 ? 1 : has_min(type) ? 4 : 2;
  const int64_t rb = row_bytes(type, k);
  for (int row = 3; row <= 4; ++row) {
    for (int64_t b = 0; b < k / 32; ++b) {
      uint8_t* block = weights + row * rb + b * block_bytes;
      const uint16_t one = fp32_to_fp16(1.0f), minus_one = fp32_to_fp16(-1.0f);
      if (type == GgmlType::MXFP4) {
        block[0] = 128;
      } else {
        std::memcpy(block, &one, 2);
      }
      if (has_min(type)) std::memcpy(block + 2, &minus_one, 2);
      std::memset(block + header, row == 3 ? 0xFF : 0x00, static_cast<size_t>(block_bytes - header));
    }
  }
}

// Random activations with outliers; token 0 is all -1 (every packed value -127).
std::vector<float> make_activations(int64_t k, int64_t n_tokens, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(k * n_tokens));
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t i = 0; i < k; ++i) {
      float v = t == 0 ? -1.0f : normal(rng);
      if (t > 0 && i % 37 == 11) v *= 25.0f;
      x[static_cast<size_t>(t * k + i)] = v;
    }
  }
  return x;
}

// Dequantized packed activations: value i of token t is qs[i] * d[i / 32] (matmul_internal.h).
std::vector<double> unpack_activations(const std::vector<uint8_t>& packed, int64_t k, int64_t n_tokens) {
  const detail::Q8Layout l = detail::q8_layout(k);
  std::vector<double> a(static_cast<size_t>(k * n_tokens));
  for (int64_t t = 0; t < n_tokens; ++t) {
    const uint8_t* row = packed.data() + t * l.row_stride;
    for (int64_t i = 0; i < k; ++i) {
      float d;
      std::memcpy(&d, row + l.d_offset + 4 * (i / 32), 4);
      a[static_cast<size_t>(t * k + i)] = static_cast<double>(static_cast<int8_t>(row[i])) * d;
    }
  }
  return a;
}

struct Problem {
  GgmlType type;
  int64_t k, n_tokens;
  std::vector<uint8_t> weights;  // kRows rows
  std::vector<float> w_float;    // bit-exact dequantization
  std::vector<uint8_t> packed;
  std::vector<double> a;  // dequantized packed activations
};

Problem make_problem(GgmlType type, const std::vector<uint8_t>& blocks, int64_t k, int64_t n_tokens) {
  Problem p{type, k, n_tokens, {}, {}, {}, {}};
  const int64_t rb = row_bytes(type, k);
  p.weights.assign(blocks.begin(), blocks.begin() + rb * kRows);
  write_extreme_rows(type, k, p.weights.data());
  p.w_float.resize(static_cast<size_t>(k * kRows));
  EXPECT_TRUE(dequantize_row(type, p.weights.data(), p.w_float.data(), k * kRows));
  const std::vector<float> x = make_activations(k, n_tokens, static_cast<uint32_t>(k * 31 + n_tokens));
  p.packed.resize(packed_activation_bytes(type, k, n_tokens));
  pack_activations(type, x.data(), k, n_tokens, p.packed.data(), 0, n_tokens);
  p.a = unpack_activations(p.packed, k, n_tokens);
  return p;
}

// Double-precision dot of dequantized weight row r and activations of token t, and the scale
// rounding errors are measured against: sum |a| (|d q| + |m|), with |d q| <= |w| + |m|.
struct ExactDot {
  double value, scale;
};

ExactDot exact_dot(const Problem& p, int64_t r, int64_t t) {
  const int64_t rb = row_bytes(p.type, p.k);
  ExactDot e{0.0, 0.0};
  for (int64_t i = 0; i < p.k; ++i) {
    const double w = p.w_float[static_cast<size_t>(r * p.k + i)];
    const double a = p.a[static_cast<size_t>(t * p.k + i)];
    double m = 0.0;
    if (has_min(p.type)) {
      const uint8_t* block = p.weights.data() + r * rb + (i / 32) * type_info(p.type).type_size;
      m = std::fabs(fp16_to_fp32(load_u16(block + 2)));
    }
    e.value += w * a;
    e.scale += std::fabs(a) * (std::fabs(w) + 2.0 * m);
  }
  return e;
}

constexpr float kUnwritten = -12345.0f;

std::vector<float> run(const Problem& p, RowRange range, bool reference) {
  const int64_t y_stride = kRows + 3;
  std::vector<float> y(static_cast<size_t>(y_stride * p.n_tokens), kUnwritten);
  if (reference) {
    matmul_rows_reference(p.type, p.weights.data(), p.k, p.packed.data(), p.n_tokens, y.data(), y_stride, range.begin,
                          range.end);
  } else {
    matmul_rows(p.type, p.weights.data(), p.k, p.packed.data(), p.n_tokens, y.data(), y_stride, range.begin,
                range.end);
  }
  return y;
}

TEST(MatmulQ32, SupportedAndDecodable) {
  for (const TypeFile& tf : kTypeFiles) {
    EXPECT_TRUE(matmul_supported(tf.type)) << type_name(tf.type);
    EXPECT_TRUE(type_info(tf.type).decodable) << type_name(tf.type);
  }
}

TEST(MatmulQ32, ReferenceMatchesDoubleDotOfDequantizedValues) {
  for (const TypeFile& tf : kTypeFiles) {
    const std::vector<uint8_t> blocks = file_blocks(tf);
    ASSERT_FALSE(blocks.empty());
    for (int64_t k : kKs) {
      for (int64_t n : {int64_t{1}, int64_t{5}}) {
        const Problem p = make_problem(tf.type, blocks, k, n);
        const std::vector<float> y = run(p, {0, kRows}, true);
        for (int64_t t = 0; t < n; ++t) {
          for (int64_t r = 0; r < kRows; ++r) {
            const ExactDot e = exact_dot(p, r, t);
            EXPECT_NEAR(y[static_cast<size_t>(t * (kRows + 3) + r)], e.value, 1e-6 * e.scale + 1e-30)
                << type_name(tf.type) << " k " << k << " token " << t << " row " << r;
          }
        }
      }
    }
  }
}

// The rows of `range` agree with the reference, the others are untouched.
::testing::AssertionResult matches_reference(const Problem& p, RowRange range, const std::vector<float>& want,
                                             const std::vector<float>& got) {
  for (int64_t t = 0; t < p.n_tokens; ++t) {
    for (int64_t r = 0; r < kRows; ++r) {
      const size_t i = static_cast<size_t>(t * (kRows + 3) + r);
      if (r < range.begin || r >= range.end) {
        if (got[i] != kUnwritten) return ::testing::AssertionFailure() << "row " << r << " written outside the range";
        continue;
      }
      const double tolerance = 2e-6 * exact_dot(p, r, t).scale + 1e-30;
      if (std::fabs(static_cast<double>(got[i]) - want[i]) > tolerance) {
        return ::testing::AssertionFailure() << "token " << t << " row " << r << ": " << got[i] << " vs reference "
                                             << want[i] << " (tolerance " << tolerance << ")";
      }
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(MatmulQ32, EverySimdLevelMatchesReference) {
  testing::SimdLevelGuard guard;
  for (const TypeFile& tf : kTypeFiles) {
    const std::vector<uint8_t> blocks = file_blocks(tf);
    ASSERT_FALSE(blocks.empty());
    for (int64_t k : kKs) {
      for (int64_t n : kTokenCounts) {
        const Problem p = make_problem(tf.type, blocks, k, n);
        for (RowRange range : kRanges) {
          const std::vector<float> want = run(p, range, true);
          for (SimdLevel level : testing::vector_simd_levels()) {
            set_simd_level(level);
            EXPECT_TRUE(matches_reference(p, range, want, run(p, range, false)))
                << type_name(tf.type) << " " << simd_level_name(level) << " k " << k << " tokens " << n << " rows ["
                << range.begin << ", " << range.end << ")";
          }
          set_simd_level(detected_simd_level());
        }
      }
    }
  }
}

}  // namespace
}  // namespace inferscope::kernels
