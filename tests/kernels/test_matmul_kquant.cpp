// Matmul of the super-block weight types (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, TQ1_0, TQ2_0, and the
// grid i-quants) with Q8_K activations: the packer against the Q8_K rule of GGUF-FORMATS.md 3.14, the scalar reference
// (integer sub-block formulas) against a double-precision product of the bit-exact dequantized
// weights and dequantized activations, and every SIMD level against the scalar reference, on
// quantized random rows, random block bytes (every scale bit pattern) and the real rows of
// testdata/quant/<type>.gguf.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "kernels/cpu/dequantize.h"
#include "kernels/formats/fp16.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/matmul_kquant.h"
#include "kernels/cpu/quantize.h"
#include "tests/support/matmul_problem.h"
#include "tests/support/simd_levels.h"
#include "tests/support/testdata.h"

namespace inferscope::kernels {
namespace {

struct TypeFile {
  GgmlType type;
  const char* file;
  int scale_offsets[2];  // byte offsets of the f16 super-block scales (-1: none)
};

constexpr TypeFile kTypes[] = {
    {GgmlType::Q4_K, "q4_k.gguf", {0, 2}},    {GgmlType::Q6_K, "q6_k.gguf", {208, -1}},
    {GgmlType::Q5_K, "q5_k.gguf", {0, 2}},    {GgmlType::Q3_K, "q3_k.gguf", {108, -1}},
    {GgmlType::Q2_K, "q2_k.gguf", {80, 82}},  {GgmlType::TQ2_0, "tq2_0.gguf", {64, -1}},
    {GgmlType::TQ1_0, "tq1_0.gguf", {52, -1}},
};

using Problem = testing::MatmulProblem;

// Random activations with outliers and, from 3 tokens on, an all-zero second token (d = 0).
void finish_problem(Problem& p, std::mt19937& rng) {
  p.x = testing::random_activations(p.k, p.n_tokens, rng);
  if (p.n_tokens > 2) std::fill(p.x.begin() + p.k, p.x.begin() + 2 * p.k, 0.0f);
  testing::decode_and_pack(p);
}

// Rows quantized from normal values of different magnitudes, one all-zero block in some rows.
Problem quantized_problem(GgmlType type, int64_t k, int64_t rows, int64_t n_tokens, uint32_t seed) {
  Problem p{type, k, rows, n_tokens, {}, {}, {}, {}};
  std::mt19937 rng(seed);
  p.weights = testing::random_quantized_rows(type, k, rows, rng, 5, 2, 256);
  finish_problem(p, rng);
  return p;
}

// Uniformly random block bytes (every value and scale bit pattern, including the extremes the
// quantizers avoid) with finite f16 super-block scales at the type's offsets.
Problem random_bytes_problem(const TypeFile& tf, int64_t k, int64_t rows, int64_t n_tokens, uint32_t seed) {
  Problem p{tf.type, k, rows, n_tokens, {}, {}, {}, {}};
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::normal_distribution<float> normal(0.0f, 1e-3f);
  p.weights.resize(static_cast<size_t>(row_bytes(tf.type, k) * rows));
  for (uint8_t& b : p.weights) b = static_cast<uint8_t>(byte(rng));
  const auto bs = static_cast<size_t>(type_info(tf.type).type_size);
  for (size_t off = 0; off < p.weights.size(); off += bs) {
    for (int so : tf.scale_offsets) {
      if (so < 0) continue;
      const uint16_t h = fp32_to_fp16(normal(rng));
      std::memcpy(p.weights.data() + off + so, &h, 2);
    }
  }
  finish_problem(p, rng);
  return p;
}

// sum_i |w_i x_i| for one (row, token): the scale errors are measured against.
double abs_dot(const Problem& p, int64_t r, int64_t t) {
  double s = 0.0;
  for (int64_t i = 0; i < p.k; ++i) {
    s += std::fabs(static_cast<double>(p.w_float[static_cast<size_t>(r * p.k + i)]) *
                   p.x[static_cast<size_t>(t * p.k + i)]);
  }
  return s;
}

std::string describe(const Problem& p, const char* what, int64_t rb, int64_t re) {
  return std::string(type_name(p.type)) + " " + what + " k=" + std::to_string(p.k) + " rows=" +
         std::to_string(p.rows) + " n=" + std::to_string(p.n_tokens) + " range=[" + std::to_string(rb) + "," +
         std::to_string(re) + ")";
}

// Every SIMD level over [row_begin, row_end) equals the scalar reference; nothing outside the
// range is written.
void check_levels(const Problem& p, int64_t row_begin, int64_t row_end) {
  testing::SimdLevelGuard guard;
  const int64_t y_stride = p.rows + 3;
  const float sentinel = -12345.0f;
  std::vector<float> ref(static_cast<size_t>(y_stride * p.n_tokens), sentinel);
  matmul_rows_reference(p.type, p.weights.data(), p.k, p.packed.data(), p.n_tokens, ref.data(), y_stride, row_begin,
                        row_end);
  for (SimdLevel level : testing::vector_simd_levels()) {
    const std::string what = describe(p, simd_level_name(level), row_begin, row_end);
    std::vector<float> got(ref.size(), sentinel);
    set_simd_level(level);
    matmul_rows(p.type, p.weights.data(), p.k, p.packed.data(), p.n_tokens, got.data(), y_stride, row_begin,
                row_end);
    for (int64_t t = 0; t < p.n_tokens; ++t) {
      for (int64_t r = 0; r < y_stride; ++r) {
        const size_t i = static_cast<size_t>(t * y_stride + r);
        if (r < row_begin || r >= row_end) {
          ASSERT_EQ(got[i], sentinel) << what << " wrote outside its rows: t=" << t << " r=" << r;
          continue;
        }
        const double err = std::fabs(static_cast<double>(got[i]) - ref[i]) / (abs_dot(p, r, t) + 1e-30);
        ASSERT_LE(err, 2e-6) << what << " t=" << t << " r=" << r << " got " << got[i] << " ref " << ref[i];
      }
    }
  }
}

// Dequantized packed activations: d * q per 256-block (GGUF-FORMATS.md 3.14).
std::vector<double> dequantized_activations(const Problem& p, int64_t t) {
  const detail::Q8KLayout l = detail::q8k_layout(p.k);
  const uint8_t* row = p.packed.data() + t * l.row_stride;
  const auto* q = reinterpret_cast<const int8_t*>(row);
  const auto* d = reinterpret_cast<const float*>(row + l.d_offset);
  std::vector<double> a(static_cast<size_t>(p.k));
  for (int64_t i = 0; i < p.k; ++i) a[static_cast<size_t>(i)] = static_cast<double>(d[i / 256]) * q[i];
  return a;
}

// The scalar reference (integer formulas) equals the double product of the independently
// decoded weights with the dequantized activations.
void check_reference_against_decoder(const Problem& p) {
  std::vector<float> ref(static_cast<size_t>(p.rows * p.n_tokens));
  matmul_rows_reference(p.type, p.weights.data(), p.k, p.packed.data(), p.n_tokens, ref.data(), p.rows, 0, p.rows);
  for (int64_t t = 0; t < p.n_tokens; ++t) {
    const std::vector<double> a = dequantized_activations(p, t);
    for (int64_t r = 0; r < p.rows; ++r) {
      double exact = 0.0, scale = 0.0;
      for (int64_t i = 0; i < p.k; ++i) {
        const double w = p.w_float[static_cast<size_t>(r * p.k + i)];
        const double prod = w * a[static_cast<size_t>(i)];
        exact += prod;
        scale += std::fabs(prod);
      }
      const double got = ref[static_cast<size_t>(t * p.rows + r)];
      ASSERT_LE(std::fabs(got - exact), 1e-5 * scale + 1e-30)
          << describe(p, "reference vs decoder", 0, p.rows) << " t=" << t << " r=" << r << " got " << got
          << " exact " << exact;
    }
  }
}

TEST(MatmulKQuant, SupportedWithQ8KPacking) {
  for (const TypeFile& tf : kTypes) {
    EXPECT_TRUE(matmul_supported(tf.type)) << type_name(tf.type);
    // Per row: 256 int8 + a float32 scale + 16 int16 sums per block, 64-byte aligned rows.
    EXPECT_EQ(packed_activation_bytes(tf.type, 512, 3), 3u * 640u) << type_name(tf.type);
  }
}

TEST(MatmulKQuant, PackingFollowsTheQ8KRule) {
  // max = -127 makes iscale exactly 1, so q is x rounded half to even.
  std::vector<float> x(512, 0.0f);
  x[0] = 2.5f;
  x[1] = 3.5f;
  x[2] = -0.5f;
  x[3] = -1.5f;
  x[4] = 126.5f;
  x[5] = -127.0f;
  x[6] = 100.49f;
  // Block 1: all zero -> d = 0, q = 0.
  const GgmlType w = GgmlType::Q4_K;
  std::vector<uint8_t> packed(packed_activation_bytes(w, 512, 1));
  pack_activations(w, x.data(), 512, 1, packed.data(), 0, 1);
  const detail::Q8KLayout l = detail::q8k_layout(512);
  const auto* q = reinterpret_cast<const int8_t*>(packed.data());
  const auto* d = reinterpret_cast<const float*>(packed.data() + l.d_offset);
  const auto* bsums = reinterpret_cast<const int16_t*>(packed.data() + l.bsums_offset);
  const int expected[7] = {2, 4, 0, -2, 126, -127, 100};
  for (int i = 0; i < 7; ++i) EXPECT_EQ(q[i], expected[i]) << i;
  EXPECT_EQ(d[0], 1.0f);
  EXPECT_EQ(bsums[0], 2 + 4 + 0 - 2 + 126 - 127 + 100);
  EXPECT_EQ(d[1], 0.0f);
  for (int i = 256; i < 512; ++i) ASSERT_EQ(q[i], 0);

  // A positive maximum gives a negative scale: the maximum itself becomes -127.
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& v : x) v = normal(rng);
  x[17] = 9.0f;
  pack_activations(w, x.data(), 512, 1, packed.data(), 0, 1);
  EXPECT_EQ(q[17], -127);
  EXPECT_EQ(d[0], 1.0f / (-127.0f / 9.0f));
  for (int i = 0; i < 256; ++i) {
    const float iscale = -127.0f / 9.0f;
    ASSERT_EQ(q[i], static_cast<int8_t>(std::min(127.0f, std::nearbyint(iscale * x[i])))) << i;
  }
  for (int s = 0; s < 32; ++s) {
    int sum = 0;
    for (int j = 0; j < 16; ++j) sum += q[16 * s + j];
    ASSERT_EQ(bsums[s], sum) << s;
  }
}

TEST(MatmulKQuant, ReferenceMatchesDecodedWeights) {
  uint32_t seed = 100;
  for (const TypeFile& tf : kTypes) {
    for (int64_t k : {256, 2816}) {
      check_reference_against_decoder(quantized_problem(tf.type, k, 5, 3, seed++));
      check_reference_against_decoder(random_bytes_problem(tf, k, 5, 3, seed++));
    }
  }
}

TEST(MatmulKQuant, SimdLevelsMatchReference) {
  const int64_t token_counts[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 17};
  uint32_t seed = 200;
  for (const TypeFile& tf : kTypes) {
    for (int64_t k : {256, 512, 2816}) {
      for (int64_t n : token_counts) {
        const int64_t rows = 3 + 2 * (n % 3) + (k == 512 ? 30 : 0);  // odd counts, one beyond a 16-row panel
        const Problem p = quantized_problem(tf.type, k, rows, n, seed++);
        check_levels(p, 0, rows);
        check_levels(p, 1, rows);
        if (rows > 20) check_levels(p, 7, rows - 2);
      }
      const Problem extremes = random_bytes_problem(tf, k, 7, 5, seed++);
      check_levels(extremes, 0, 7);
      const Problem extremes_decode = random_bytes_problem(tf, k, 5, 1, seed++);
      check_levels(extremes_decode, 2, 5);
    }
  }
}

// Rows 40..60 of tensor `name` of the file at `path` (of `type`), with 1 and 7 tokens: the
// reference against the decoder, every SIMD level against the reference.
void check_real_rows(const std::string& path, const char* name, GgmlType type, uint32_t& seed) {
  auto file = gguf::File::open(path);
  ASSERT_TRUE(file.is_ok()) << file.message();
  const gguf::TensorInfo* t = file.value()->find_tensor(name);
  ASSERT_NE(t, nullptr) << path << " " << name;
  ASSERT_EQ(t->type, type) << path << " " << name;
  for (int64_t n : {1, 7}) {
    Problem p{type, t->ne[0], 21, n, {}, {}, {}, {}};
    const uint8_t* first = t->data + 40 * t->row_bytes;
    p.weights.assign(first, first + p.rows * t->row_bytes);
    std::mt19937 rng(seed++);
    finish_problem(p, rng);
    check_reference_against_decoder(p);
    check_levels(p, 0, p.rows);
    check_levels(p, 3, p.rows);
  }
}

// Real rows written by llama-quantize.
TEST(MatmulKQuant, RealRowsFromConformanceFiles) {
  uint32_t seed = 300;
  for (const TypeFile& tf : kTypes) {
    for (const char* name : {"blk.0.ffn_down.weight", "blk.0.attn_q.weight"}) {
      check_real_rows(testing::testdata(std::string("quant/") + tf.file), name, tf.type, seed);
    }
  }
}

// The grid i-quants, which go through the same unpacked form (iquant_blocks.h) and have no
// quantizer of ours: uniformly random block bytes (every grid index, sign and scale) with a
// finite super-block scale, and the real rows of the reference's files
// (tests/data/llama.cpp-2026/llama-256-tiny-<type>.gguf).
struct IqType {
  GgmlType type;
  const char* name;
};

constexpr IqType kIqTypes[] = {
    {GgmlType::IQ1_S, "iq1_s"}, {GgmlType::IQ1_M, "iq1_m"},     {GgmlType::IQ2_XXS, "iq2_xxs"},
    {GgmlType::IQ2_XS, "iq2_xs"}, {GgmlType::IQ2_S, "iq2_s"}, {GgmlType::IQ3_XXS, "iq3_xxs"},
    {GgmlType::IQ3_S, "iq3_s"}, {GgmlType::IQ4_XS, "iq4_xs"},
};

Problem iq_random_problem(const IqType& it, int64_t k, int64_t rows, int64_t n_tokens, uint32_t seed) {
  Problem p{it.type, k, rows, n_tokens, {}, {}, {}, {}};
  std::mt19937 rng(seed);
  p.weights = testing::random_iq_rows(it.type, k, rows, rng);
  finish_problem(p, rng);
  return p;
}

TEST(MatmulIQuant, SimdLevelsAndReferenceOnRandomBlocks) {
  uint32_t seed = 400;
  for (const IqType& it : kIqTypes) {
    EXPECT_TRUE(matmul_supported(it.type)) << it.name;
    EXPECT_EQ(packed_activation_bytes(it.type, 512, 3), 3u * 640u) << it.name;
    for (int64_t k : {256, 768}) {
      check_reference_against_decoder(iq_random_problem(it, k, 5, 3, seed++));
      for (int64_t n : {1, 2, 5, 17}) {
        const int64_t rows = 3 + 2 * (n % 3) + (k == 768 ? 30 : 0);  // one beyond a 16-row panel
        const Problem p = iq_random_problem(it, k, rows, n, seed++);
        check_levels(p, 0, rows);
        check_levels(p, 1, rows);
        if (rows > 20) check_levels(p, 7, rows - 2);
      }
    }
  }
}

TEST(MatmulIQuant, RealRowsFromTheReferencesFiles) {
  uint32_t seed = 500;
  for (const IqType& it : kIqTypes) {
    const std::string path =
        std::string(INFERSCOPE_SOURCE_DIR) + "/tests/data/llama.cpp-2026/llama-256-tiny-" + it.name + ".gguf";
    check_real_rows(path, "blk.0.ffn_down.weight", it.type, seed);
  }
}

}  // namespace
}  // namespace inferscope::kernels
