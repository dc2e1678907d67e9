// kernels/cuda/matvec.h on the emulator: get_rows and dequantize_rows bit-exact with
// kernels::dequantize_row, the q8 activations with the CPU's Q8_0 rule, and the matvecs
// against double-precision products of the CPU-decoded weights with the activations they read.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/dequantize.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cuda/matvec.h"
#include "kernels/formats/fp16.h"
#include "tests/cuda/ops/device_buffer.h"
#include "tests/cuda/ops/kernel_check.h"
#include "tests/support/matmul_problem.h"

namespace inferscope::cuda_test {
namespace {

namespace ck = cuda_kernels;
using kernels::GgmlType;

constexpr GgmlType kTypes[] = {GgmlType::F32,   GgmlType::F16,  GgmlType::BF16, GgmlType::F16_2OF4, GgmlType::Q4_0,
                               GgmlType::Q4_1,  GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0,     GgmlType::Q2_K,
                               GgmlType::Q3_K,  GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K,     GgmlType::IQ4_NL,
                               GgmlType::MXFP4, GgmlType::TQ1_0, GgmlType::TQ2_0, GgmlType::IQ4_XS,
                               GgmlType::IQ1_S, GgmlType::IQ1_M, GgmlType::IQ2_XXS, GgmlType::IQ2_XS,
                               GgmlType::IQ2_S, GgmlType::IQ3_XXS, GgmlType::IQ3_S};

bool is_float(GgmlType type) {
  return type == GgmlType::F32 || type == GgmlType::F16 || type == GgmlType::BF16 || type == GgmlType::F16_2OF4;
}

int64_t block_size(GgmlType type) { return kernels::type_info(type).block_size; }

// Row lengths with fewer slices than a CUDA block has threads, and with several per thread
// (matvec.cu: 128 threads; 4 per 32-value block, 16 or 32 per 256-value one, 1 per 16 bytes of
// F32 / F16 / BF16); F16 / BF16 rows of 300 values take the narrow path.
std::vector<int64_t> test_cols(GgmlType type) {
  if (type == GgmlType::F32 || type == GgmlType::F16 || type == GgmlType::BF16) return {300, 520, 4104};
  return block_size(type) == 32 ? std::vector<int64_t>{224, 4128} : std::vector<int64_t>{768, 2304};
}

// Offsets of the F16 scale fields in each block of a quantized type (GGUF-FORMATS.md 3.x).
std::vector<int> f16_fields(GgmlType type) {
  switch (type) {
    case GgmlType::Q4_0:
    case GgmlType::Q5_0:
    case GgmlType::Q8_0:
    case GgmlType::IQ4_NL:
    case GgmlType::IQ4_XS:
    case GgmlType::IQ1_S:
    case GgmlType::IQ2_XXS:
    case GgmlType::IQ2_XS:
    case GgmlType::IQ2_S:
    case GgmlType::IQ3_XXS:
    case GgmlType::IQ3_S:
      return {0};
    case GgmlType::Q4_1:
    case GgmlType::Q5_1:
    case GgmlType::Q4_K:
    case GgmlType::Q5_K:
      return {0, 2};
    case GgmlType::Q2_K:
      return {80, 82};
    case GgmlType::Q3_K:
      return {108};
    case GgmlType::Q6_K:
      return {208};
    case GgmlType::TQ1_0:
      return {52};
    case GgmlType::TQ2_0:
      return {64};
    case GgmlType::F16_2OF4:
      return {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30};
    default:
      return {};
  }
}

// A matrix of `rows` rows of `row_bytes` bytes (>= the type's row size; the rest left zero).
// Float types: encoded random values. Block types: random bytes with finite F16 scales in
// [-1, 1), so every bit pattern of the codes occurs (TQ2_0's unused code 3...), but for
// F16_2OF4's positions, two distinct ones in ascending order as the format has them.
std::vector<uint8_t> random_matrix(GgmlType type, int64_t rows, int64_t cols, int64_t row_bytes, uint32_t seed) {
  std::vector<uint8_t> m(static_cast<size_t>(rows * row_bytes));
  std::mt19937 rng(seed);
  if (type == GgmlType::F32 || type == GgmlType::F16 || type == GgmlType::BF16) {
    for (int64_t r = 0; r < rows; ++r) {
      const float magnitude = static_cast<float>(1 + r % 3);
      const std::vector<float> row =
          random_values(static_cast<size_t>(cols), seed + static_cast<uint32_t>(r), -magnitude, magnitude);
      EXPECT_TRUE(kernels::quantize_row(type, row.data(), &m[r * row_bytes], cols));
    }
    return m;
  }
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(-1.0f, 1.0f);
  const auto info = kernels::type_info(type);
  for (int64_t r = 0; r < rows; ++r) {
    uint8_t* row = &m[r * row_bytes];
    for (int64_t i = 0; i < kernels::row_bytes(type, cols); ++i) row[i] = static_cast<uint8_t>(byte(rng));
    for (int64_t b = 0; b < cols / info.block_size; ++b) {
      uint8_t* block = row + b * info.type_size;
      for (int offset : f16_fields(type)) {
        const uint16_t h = kernels::fp32_to_fp16(scale(rng));
        std::memcpy(block + offset, &h, 2);
      }
      if (type == GgmlType::MXFP4) block[0] = static_cast<uint8_t>(120 + byte(rng) % 16);  // factors 2^-8..2^7
      if (type == GgmlType::IQ1_M) testing::set_iq1_m_unit(block, kernels::fp32_to_fp16(scale(rng)));
      if (type != GgmlType::F16_2OF4) continue;
      for (int g = 0; g < 8; ++g) {
        const int first = byte(rng) % 3, second = first + 1 + byte(rng) % (3 - first);
        block[32 + g / 2] = static_cast<uint8_t>((block[32 + g / 2] & (0xF0 >> (4 * (g % 2)))) |
                                                 ((first | (second << 2)) << (4 * (g % 2))));
      }
    }
  }
  return m;
}

// The CPU's decoding of rows [0, rows) of a matrix: [rows][cols].
std::vector<float> cpu_rows(GgmlType type, const uint8_t* m, int64_t rows, int64_t cols, int64_t row_bytes) {
  std::vector<float> out(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    EXPECT_TRUE(kernels::dequantize_row(type, m + r * row_bytes, &out[r * cols], cols));
  }
  return out;
}

ck::DeviceWeight device_weight(GgmlType type, const DeviceBuffer<uint8_t>& data, int64_t rows, int64_t cols,
                               int64_t row_bytes, int64_t n_mats = 1) {
  return {type, data.get(), rows, cols, row_bytes, rows * row_bytes, n_mats};
}

// ---- get_rows, dequantize_rows, convert ----------------------------------------------------

TEST(CudaGetRows, BitExactWithCpuDecodingForEveryType) {
  const std::vector<int32_t> ids = {3, -1, 0, 5, 4, 3};  // 5: past the table, like -1 a zero row
  for (const GgmlType type : kTypes) {
    for (const int64_t cols : test_cols(type)) {
      const int64_t rows = 5, row_bytes = kernels::row_bytes(type, cols) + 16;
      const std::vector<uint8_t> table = random_matrix(type, rows, cols, row_bytes, 11);
      const std::vector<float> decoded = cpu_rows(type, table.data(), rows, cols, row_bytes);
      DeviceBuffer<uint8_t> dtable(table);
      DeviceBuffer<int32_t> dids(ids);
      const auto w = device_weight(type, dtable, rows, cols, row_bytes);
      for (const float scale : {1.0f, 0.37f}) {
        for (const int64_t offset : {0, 1}) {  // 16-byte aligned output, and not
          DeviceBuffer<float> out(ids.size() * cols + offset);
          ASSERT_EQ(
              ck::launch_get_rows(w, dids.get(), static_cast<int64_t>(ids.size()), scale, out.get() + offset, nullptr),
              cudaSuccess);
          const std::vector<float> got = out.read();
          for (size_t i = 0; i < ids.size(); ++i) {
            for (int64_t c = 0; c < cols; ++c) {
              const bool valid = ids[i] >= 0 && ids[i] < rows;
              const float want = valid ? decoded[ids[i] * cols + c] * scale : 0.0f;
              ASSERT_EQ(kernels::f32_bits(got[offset + i * cols + c]), kernels::f32_bits(want))
                  << kernels::type_name(type) << " cols " << cols << " row " << i << " col " << c << " scale " << scale;
            }
          }
        }
      }
    }
  }
}

TEST(CudaDequantize, RowsMatchCpuRoundedToF16AndBF16) {
  for (const GgmlType type : kTypes) {
    for (const int64_t cols : test_cols(type)) {
      const int64_t rows = 6, n_mats = 2, row_bytes = kernels::row_bytes(type, cols) + 16;
      const int64_t row0 = 2, n_rows = 3;
      const std::vector<uint8_t> stack = random_matrix(type, n_mats * rows, cols, row_bytes, 12);
      const std::vector<float> decoded =
          cpu_rows(type, stack.data() + (rows + row0) * row_bytes, n_rows, cols, row_bytes);
      DeviceBuffer<uint8_t> dstack(stack);
      const auto w = device_weight(type, dstack, rows, cols, row_bytes, n_mats);
      for (const ck::TileType out : {ck::TileType::F16, ck::TileType::BF16}) {
        for (const int64_t offset : {0, 1}) {
          DeviceBuffer<uint16_t> tile(n_rows * cols + offset);
          ASSERT_EQ(ck::launch_dequantize_rows(w, 1, row0, n_rows, out, tile.get() + offset, nullptr), cudaSuccess);
          const std::vector<uint16_t> got = tile.read();
          for (size_t i = 0; i < decoded.size(); ++i) {
            const uint16_t want =
                out == ck::TileType::F16 ? kernels::fp32_to_fp16(decoded[i]) : kernels::fp32_to_bf16(decoded[i]);
            ASSERT_EQ(got[offset + i], want) << kernels::type_name(type) << " cols " << cols << " value " << i
                                             << (out == ck::TileType::F16 ? " f16" : " bf16");
          }
        }
      }
      EXPECT_EQ(ck::launch_dequantize_rows(w, 2, 0, 1, ck::TileType::F16, nullptr, nullptr), cudaErrorInvalidValue);
      EXPECT_EQ(ck::launch_dequantize_rows(w, 0, 4, 3, ck::TileType::F16, nullptr, nullptr), cudaErrorInvalidValue);
    }
  }
}

TEST(CudaDequantize, ConvertRoundsToNearestEven) {
  std::vector<float> x = random_values(1001, 13, -70000.0f, 70000.0f);
  const float special[] = {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f,
                           1.0f + 0x1p-8f,  1.0f + 3 * 0x1p-8f,
                           65520.0f,        -65519.0f,
                           0x1p-25f,        3 * 0x1p-25f,
                           0x1p-20f,        -0x1.8p-24f,
                           1e-40f,          0.0f,
                           -0.0f,           INFINITY,
                           -INFINITY};
  for (size_t i = 0; i < std::size(special); ++i) x[i] = special[i];
  for (size_t i = std::size(special); i < 200; ++i) x[i] *= 1e-6f;  // small and subnormal F16 values
  DeviceBuffer<float> dx(x);
  for (const ck::TileType out : {ck::TileType::F16, ck::TileType::BF16}) {
    DeviceBuffer<uint16_t> dst(x.size());
    ASSERT_EQ(ck::launch_convert(dx.get(), static_cast<int64_t>(x.size()), out, dst.get(), nullptr), cudaSuccess);
    const std::vector<uint16_t> got = dst.read();
    for (size_t i = 0; i < x.size(); ++i) {
      const uint16_t want = out == ck::TileType::F16 ? kernels::fp32_to_fp16(x[i]) : kernels::fp32_to_bf16(x[i]);
      ASSERT_EQ(got[i], want) << x[i];
    }
  }
}

// ---- The int8 activations -------------------------------------------------------------------

// The q8 rows the kernels read, per matvec.h's layout: codes, then {F32 d, int32 sum} per block.
struct HostQ8 {
  std::vector<int8_t> codes;  // [rows][cols]
  std::vector<float> d;       // [rows][cols / 32]
  std::vector<int32_t> sum;
};

HostQ8 cpu_q8(const std::vector<float>& x, int64_t rows, int64_t cols) {
  HostQ8 q{std::vector<int8_t>(x.size()), std::vector<float>(x.size() / 32), std::vector<int32_t>(x.size() / 32)};
  for (int64_t b = 0; b < rows * cols / 32; ++b) {
    q.d[b] = kernels::round_to_fp16(kernels::quantize_block_q8(&x[32 * b], &q.codes[32 * b]));
    for (int j = 0; j < 32; ++j) q.sum[b] += q.codes[32 * b + j];
  }
  return q;
}

// The values the q8 rows stand for: d * code.
std::vector<float> q8_values(const HostQ8& q) {
  std::vector<float> v(q.codes.size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = q.d[i / 32] * static_cast<float>(q.codes[i]);
  return v;
}

TEST(CudaMatvec, QuantizeQ8MatchesTheCpuRule) {
  const int64_t rows = 3, cols = 96;  // a row of 120 bytes, padded to 128
  std::vector<float> x = random_values(rows * cols, 14, -3.0f, 3.0f);
  for (int j = 0; j < 32; ++j) x[32 + j] = 0.0f;                                // a block of zeros: d = 0
  for (int j = 0; j < 32; ++j) x[64 + j] = static_cast<float>(j - 16) * 0.25f;  // d = 0.5: ties x / d = k + 0.5
  x[64] = -127.0f * 0.5f;
  const HostQ8 want = cpu_q8(x, rows, cols);
  DeviceBuffer<float> dx(x);
  const int64_t row_bytes = ck::q8_activation_bytes(1, cols);
  ASSERT_EQ(row_bytes, 128);
  ASSERT_EQ(ck::q8_activation_bytes(rows, cols), rows * row_bytes);
  DeviceBuffer<uint8_t> q8(rows * row_bytes);
  ASSERT_EQ(ck::launch_quantize_q8(dx.get(), rows, cols, q8.get(), nullptr), cudaSuccess);
  const std::vector<uint8_t> got = q8.read();
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = &got[r * row_bytes];
    for (int64_t c = 0; c < cols; ++c) {
      ASSERT_EQ(static_cast<int8_t>(row[c]), want.codes[r * cols + c]) << r << " " << c;
    }
    for (int64_t b = 0; b < cols / 32; ++b) {
      float d;
      int32_t sum;
      std::memcpy(&d, row + cols + 8 * b, 4);
      std::memcpy(&sum, row + cols + 8 * b + 4, 4);
      EXPECT_EQ(kernels::f32_bits(d), kernels::f32_bits(want.d[r * cols / 32 + b])) << r << " " << b;
      EXPECT_EQ(sum, want.sum[r * cols / 32 + b]) << r << " " << b;
    }
  }
}

TEST(CudaMatvec, SupportedTypesAndActivations) {
  for (const GgmlType type : kTypes) {
    EXPECT_TRUE(ck::matvec_supports(type)) << kernels::type_name(type);
    EXPECT_EQ(ck::matvec_takes_q8(type, 512), !is_float(type)) << kernels::type_name(type);
    EXPECT_FALSE(ck::matvec_takes_q8(type, block_size(type) + 1)) << kernels::type_name(type);
  }
  EXPECT_TRUE(ck::matvec_takes_q8(GgmlType::Q4_0, 96));
  EXPECT_FALSE(ck::matvec_takes_q8(GgmlType::Q4_K, 96));
  EXPECT_FALSE(ck::matvec_supports(GgmlType::NVFP4));
  EXPECT_FALSE(ck::matvec_supports(GgmlType::Q8_K));
}

// ---- The products ---------------------------------------------------------------------------

// One weight type's matrix stack and activations on the device, with the CPU's view of both.
struct Problem {
  GgmlType type;
  int64_t rows, cols, row_bytes, n_mats, x_rows;
  std::vector<uint8_t> weights;
  std::vector<float> decoded;  // [n_mats * rows][cols], by the CPU
  std::vector<float> x;        // [x_rows][cols]
  std::vector<float> x_read;   // what the kernels multiply: x, or the values of its q8 form
  DeviceBuffer<uint8_t> dw;
  DeviceBuffer<float> dx;
  DeviceBuffer<uint8_t> dq8;

  Problem(GgmlType t, int64_t r, int64_t c, int64_t mats, int64_t xr, uint32_t seed)
      : type(t),
        rows(r),
        cols(c),
        row_bytes(kernels::row_bytes(t, c)),
        n_mats(mats),
        x_rows(xr),
        weights(random_matrix(t, mats * r, c, row_bytes, seed)),
        decoded(cpu_rows(t, weights.data(), mats * r, c, row_bytes)),
        x(random_values(xr * c, seed + 1)),
        x_read(ck::matvec_takes_q8(t, c) ? q8_values(cpu_q8(x, xr, c)) : x),
        dw(weights),
        dx(x),
        dq8(ck::q8_activation_bytes(xr, c)) {
    if (ck::matvec_takes_q8(t, c)) {
      EXPECT_EQ(ck::launch_quantize_q8(dx.get(), xr, c, dq8.get(), nullptr), cudaSuccess);
    }
  }
  ck::DeviceWeight weight() const { return device_weight(type, dw, rows, cols, row_bytes, n_mats); }

  // W[mat] . x_used[x_row] for every row, in double.
  std::vector<float> reference(int64_t mat, int64_t x_row, const std::vector<float>& x_used) const {
    std::vector<float> y(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      const float* w = &decoded[(mat * rows + r) * cols];
      double sum = 0.0;
      for (int64_t c = 0; c < cols; ++c) sum += static_cast<double>(w[c]) * x_used[x_row * cols + c];
      y[r] = static_cast<float>(sum);
    }
    return y;
  }
};

// Normalized error against the activations the kernel reads (float summation order only), and
// for the int8 ones also against x itself (their quantization error).
constexpr double kReadError = 2e-6;
constexpr double kQ8Error = 2e-2;

TEST(CudaMatvec, MatchesReferenceForEveryTypeAndTokenCount) {
  const int64_t rows = 37, y_pad = 5;  // rows: not a multiple of the rows per CUDA block
  for (const GgmlType type : kTypes) {
    for (const int64_t cols : test_cols(type)) {
      Problem p(type, rows, cols, 1, 8, 21);
      for (const int64_t n : {1, 2, 5, 8}) {
        for (const int64_t x_offset : {0, 1}) {  // an x that is not 16-byte aligned: the float types' narrow path
          if (x_offset == 1 && !is_float(type)) continue;
          const int64_t y_stride = rows + y_pad;
          DeviceBuffer<float> dy(std::vector<float>(n * y_stride, -7.0f));
          std::vector<float> shifted(x_offset + p.x.size());
          std::copy(p.x.begin(), p.x.end(), shifted.begin() + x_offset);
          DeviceBuffer<float> dx(shifted);
          ASSERT_EQ(ck::launch_matvec(p.weight(), dx.get() + x_offset, p.dq8.get(), n, dy.get(), y_stride, nullptr),
                    cudaSuccess);
          const std::vector<float> y = dy.read();
          for (int64_t t = 0; t < n; ++t) {
            const std::vector<float> got(y.begin() + t * y_stride, y.begin() + t * y_stride + rows);
            const std::string where = std::string(kernels::type_name(type)) + " cols " + std::to_string(cols) + " n " +
                                      std::to_string(n) + " token " + std::to_string(t) + " x offset " +
                                      std::to_string(x_offset);
            EXPECT_LT(normalized_error(got, p.reference(0, t, p.x_read)), kReadError) << where;
            if (!is_float(type)) {
              EXPECT_LT(normalized_error(got, p.reference(0, t, p.x)), kQ8Error) << where;
            }
            for (int64_t i = rows; i < y_stride; ++i) {
              EXPECT_EQ(y[t * y_stride + i], -7.0f) << where << ": padding written";
            }
          }
        }
      }
    }
  }
}

TEST(CudaMatvec, ExpertsMatchReferenceWithInvalidIdsAsZeros) {
  const int64_t rows = 19, n_mats = 3, n_tokens = 3, k = 2;
  const std::vector<int32_t> ids = {2, 0, -1, 1, 1, 3};  // [n_tokens][k]; -1 and 3 are no expert
  DeviceBuffer<int32_t> dids(ids);
  for (const GgmlType type : kTypes) {
    const int64_t cols = test_cols(type).back();
    for (const bool x_per_pair : {false, true}) {
      Problem p(type, rows, cols, n_mats, x_per_pair ? n_tokens * k : n_tokens, 31);
      DeviceBuffer<float> dy(std::vector<float>(n_tokens * k * rows, -7.0f));
      ASSERT_EQ(ck::launch_matvec_experts(p.weight(), p.dx.get(), p.dq8.get(), x_per_pair, dids.get(), n_tokens, k,
                                          dy.get(), nullptr),
                cudaSuccess);
      const std::vector<float> y = dy.read();
      for (int64_t pair = 0; pair < n_tokens * k; ++pair) {
        const std::vector<float> got(y.begin() + pair * rows, y.begin() + (pair + 1) * rows);
        const std::string where = std::string(kernels::type_name(type)) + " pair " + std::to_string(pair) +
                                  (x_per_pair ? " x per pair" : " x per token");
        if (ids[pair] < 0 || ids[pair] >= n_mats) {
          EXPECT_EQ(got, std::vector<float>(rows, 0.0f)) << where;
          continue;
        }
        const int64_t x_row = x_per_pair ? pair : pair / k;
        EXPECT_LT(normalized_error(got, p.reference(ids[pair], x_row, p.x_read)), kReadError) << where;
      }
    }
  }
}

}  // namespace
}  // namespace inferscope::cuda_test
