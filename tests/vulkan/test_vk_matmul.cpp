// The Vulkan matmul family (engine/backend/vulkan/ops/vk_matmul.h) for every weight type:
//   get_rows  bit-exact against kernels::dequantize_row (times the scale, one f32 multiply)
//   matmul    matvec (both layouts) and matmat, awkward sizes, against a double-precision product of the
//             exactly decoded weights; NMSE = sum (gpu - ref)^2 / sum ref^2 < 1e-8 (f32 sums in
//             another order give ~1e-12; one wrong element in a row of 32 gives ~3e-2, a scale
//             off by 1% ~1e-4, both checked to fail). The int8 matvec (x quantized by
//             record_quantize_q8 first, as the forward pass does) is checked with NMSE < 1e-11,
//             in its native and portable variants, against the CPU backend's int8 reference for
//             the 32-block types (kernels::matmul_rows_reference on kernels::pack_activations:
//             the same quantized x and integer block sums), and for the K-quant and ternary
//             types against the double-precision product with x quantized per 32 values;
//             against the float product it differs by ~1e-5 (the quantization of x), which is
//             checked too.
//   experts   per-token and per-pair x, an out-of-range id (a zero row), padded matrix stride
//   slices    byte_offset (row slices at 2-byte-aligned starts), y_stride / y_col_offset with
//             the other columns untouched
// Weights come from our quantizer (kernels/cpu/quantize.h) with all-zero blocks mixed in.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "engine/backend/vulkan/ops/vk_matmul.h"
#include "engine/backend/vulkan/ops/vk_op_util.h"
#include "engine/backend/vulkan/ops/vk_quantize.h"
#include "engine/backend/vulkan/vk_device.h"
#include "engine/backend/vulkan/vk_recorder.h"
#include "kernels/cpu/dequantize.h"
#include "kernels/formats/ggml_type.h"
#include "kernels/formats/fp16.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quantize.h"
#include "kernels/formats/iq_grids.h"
#include "tests/support/matmul_problem.h"
#include "tests/support/vulkan_device.h"
#include "tests/support/vulkan_gpu.h"
#include "tests/vulkan/vk_op_checks.h"

namespace inferscope::vulkan {
namespace {

using kernels::GgmlType;
using op_tests::PortableInt8;

constexpr double kNmseMatmul = 1e-8;
constexpr double kNmseInt8 = 1e-11;  // against the CPU's int8 reference: f32 sums in another order
// Int8 K-quant products against the double-precision one: their min terms (dmin * mn * sum x)
// nearly cancel the scaled sums, so f32 rounding shows more; one activation off by one level
// gives ~1e-6.
constexpr double kNmseInt8Mins = 1e-9;

const GgmlType kAllTypes[] = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q8_0,  GgmlType::Q4_0,  GgmlType::Q4_1,
                              GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q2_K, GgmlType::Q3_K,  GgmlType::Q4_K,  GgmlType::Q5_K,
                              GgmlType::Q6_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS, GgmlType::MXFP4, GgmlType::TQ1_0,
                              GgmlType::TQ2_0, GgmlType::F16_2OF4, GgmlType::IQ2_XXS};
// The other grid i-quants: their decoders differ from IQ2_XXS's only in load_chunk (the rest is
// types/iq_grid_values.glsl), so every kernel runs on IQ2_XXS and these check their decoding bit
// for bit through get_rows (and on whole models in test_vk_model.cpp).
const GgmlType kOtherGridTypes[] = {GgmlType::IQ1_S, GgmlType::IQ1_M,   GgmlType::IQ2_XS,
                                    GgmlType::IQ2_S, GgmlType::IQ3_XXS, GgmlType::IQ3_S};


bool is_superblock(GgmlType t) { return kernels::type_info(t).block_size == 256; }

// Columns: one and several blocks; for float types also lengths that are not a multiple of 32
// (40), of 8 (172, as stories260K's F32 feed-forward) or of anything (13).
std::vector<int64_t> test_cols(GgmlType t) {
  if (is_superblock(t)) return {256, 768};
  if (kernels::type_info(t).block_size == 1) return {32, 96, 160, 40, 172, 13};
  return {32, 96, 160};
}

// Overrides of the automatic matmul choices for a scope.
class Overrides {
 public:
  explicit Overrides(const MatmulOverrides& o) { set_matmul_overrides(o); }
  ~Overrides() { set_matmul_overrides({}); }
};

class WorkgroupSize {
 public:
  explicit WorkgroupSize(uint32_t size) { set_op_workgroup_override(size); }
  ~WorkgroupSize() { set_op_workgroup_override(0); }
};

MatmulOverrides path(MatmulOverrides::Path p, int rowwise = -1) {
  MatmulOverrides o;
  o.path = p;
  o.matvec_rowwise = rowwise;
  return o;
}

// The three kernels: matvec in its GPU layout (chunks split over invocations), matvec in its
// CPU layout (rows per invocation, subgroup-shared x; needs cols % 32 == 0, else the GPU
// layout runs), and the tiled matmat (needs cols % 32 == 0, else matvec runs).
struct Kernel {
  const char* name;
  MatmulOverrides overrides;
};

double nmse(const std::vector<float>& got, const std::vector<double>& want) {
  EXPECT_EQ(got.size(), want.size());
  double err = 0.0, ref = 0.0;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    const double d = static_cast<double>(got[i]) - want[i];
    err += std::isfinite(d) ? d * d : 1e300;
    ref += want[i] * want[i];
  }
  return err / std::max(ref, 1e-30);
}

using testing::Gpu;

// A weight matrix of `rows` rows (of `n_mats` stacked matrices) with its exact decoding.
struct HostWeights {
  GgmlType type;
  int64_t cols, rows, row_bytes;
  std::vector<uint8_t> bytes;  // rows * row_bytes
  std::vector<float> decoded;  // rows * cols
};

HostWeights make_weights(GgmlType type, int64_t cols, int64_t rows, uint32_t seed) {
  std::mt19937 rng(seed);
  HostWeights w{type, cols, rows, kernels::row_bytes(type, cols), {}, {}};
  // Every 5th row starts with 64 zeros (all-zero blocks: d = 0); the grid i-quants' bytes are
  // random (every index, sign and scale).
  w.bytes = kernels::is_grid_iquant(type) ? testing::random_iq_rows(type, cols, rows, rng)
                                 : testing::random_quantized_rows(type, cols, rows, rng, 5, 2, 64);
  w.decoded.resize(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    EXPECT_TRUE(kernels::dequantize_row(type, w.bytes.data() + r * w.row_bytes, w.decoded.data() + r * cols, cols));
  }
  return w;
}

// How a kernel multiplies: the matvec of the 32-block types runs in int8 like the CPU backend,
// everything else (and the tiled matmat) in float.
enum class Arithmetic { Float, Int8 };

bool has_int8_matvec(GgmlType t) { return kernels::type_info(t).block_size > 1; }

// The types whose int8 products are the CPU backend's (activations quantized per 32 values).
bool cpu_int8_per_32(GgmlType t) {
  return t == GgmlType::Q8_0 || t == GgmlType::Q4_0 || t == GgmlType::Q4_1 || t == GgmlType::Q5_0 ||
         t == GgmlType::Q5_1 || t == GgmlType::IQ4_NL || t == GgmlType::MXFP4;
}

// The arithmetic of a product under the current overrides.
Arithmetic arithmetic_of(const Device& device, GgmlType t, int64_t cols, int64_t n, bool experts = false) {
  return matmul_takes_q8(device, t, cols, n, experts) ? Arithmetic::Int8 : Arithmetic::Float;
}

// x with every 32-value block quantized as the int8 matvec quantizes it (the Q8_0 rule of
// kernels::quantize_block_q8, the scale rounded to f16) and decoded back: q * d.
std::vector<float> quantized_x(const std::vector<float>& x) {
  std::vector<float> out(x.size());
  for (size_t b = 0; b + 32 <= x.size(); b += 32) {
    int8_t q[32];
    const float d = kernels::round_to_fp16(kernels::quantize_block_q8(x.data() + b, q));
    for (int j = 0; j < 32; ++j) out[b + j] = static_cast<float>(q[j]) * d;
  }
  return out;
}

std::vector<double> reference(const HostWeights& w, int64_t first_row, int64_t rows, const std::vector<float>& x,
                              int64_t n, Arithmetic arithmetic = Arithmetic::Float);

// The int8 product of rows [first_row, first_row + rows) with x. For the 32-block types the
// CPU backend's: x packed by kernels::pack_activations, integer block sums by
// kernels::matmul_rows_reference. For the others (the CPU quantizes their x per 256 values):
// the double-precision product of the decoded weights with x quantized per 32 values.
std::vector<double> reference_int8(const HostWeights& w, int64_t first_row, int64_t rows, const std::vector<float>& x,
                                   int64_t n) {
  if (!cpu_int8_per_32(w.type)) return reference(w, first_row, rows, quantized_x(x), n, Arithmetic::Float);
  std::vector<uint8_t> packed(kernels::packed_activation_bytes(w.type, w.cols, n));
  kernels::pack_activations(w.type, x.data(), w.cols, n, packed.data(), 0, n);
  std::vector<float> y(static_cast<size_t>(n * rows));
  kernels::matmul_rows_reference(w.type, w.bytes.data() + first_row * w.row_bytes, w.cols, packed.data(), n, y.data(),
                                 rows, 0, rows);
  return std::vector<double>(y.begin(), y.end());
}

// ref[t][r] = sum_c w[first_row + r][c] x[t][c] in double (Float), or the CPU's int8 product.
std::vector<double> reference(const HostWeights& w, int64_t first_row, int64_t rows, const std::vector<float>& x,
                              int64_t n, Arithmetic arithmetic) {
  if (arithmetic == Arithmetic::Int8) return reference_int8(w, first_row, rows, x, n);
  std::vector<double> ref(static_cast<size_t>(n * rows));
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t r = 0; r < rows; ++r) {
      double s = 0.0;
      const float* wr = w.decoded.data() + (first_row + r) * w.cols;
      const float* xt = x.data() + t * w.cols;
      for (int64_t c = 0; c < w.cols; ++c) s += static_cast<double>(wr[c]) * xt[c];
      ref[static_cast<size_t>(t * rows + r)] = s;
    }
  }
  return ref;
}

const Kernel kKernels[] = {{"matvec", path(MatmulOverrides::Path::Matvec, 0)},
                           {"matvec_rowwise", path(MatmulOverrides::Path::Matvec, 1)},
                           {"matmat", path(MatmulOverrides::Path::Matmat)}};

// kKernels, plus for the int8 matvec both layouts in the portable variant.
struct KernelCase {
  Kernel kernel;
  bool portable = false;
};
std::vector<KernelCase> kernels_for(GgmlType t) {
  std::vector<KernelCase> k;
  for (const Kernel& kernel : kKernels) k.push_back({kernel});
  if (has_int8_matvec(t)) {
    k.push_back({{"matvec, portable int8", kKernels[0].overrides}, true});
    k.push_back({{"matvec_rowwise, portable int8", kKernels[1].overrides}, true});
  }
  return k;
}

// Records y = W x as the forward pass does: x quantized into a new buffer first when the
// product multiplies in int8.
void record_product(Gpu& gpu, Device& device, const WeightView& w, const Buffer& xb, int64_t n, const Buffer& yb,
                    int64_t y_stride, int64_t y_col) {
  MatmulInput in(BufferSpan::whole(xb));
  if (matmul_takes_q8(device, w.type, w.cols, n, false)) {
    const Buffer& q8 = gpu.allocate(q8_activation_bytes(w.cols, n));
    Gpu::check(record_quantize_q8(device, gpu.recorder(), BufferSpan::whole(xb), n, w.cols, BufferSpan::whole(q8)),
               "record_quantize_q8");
    in.q8 = BufferSpan::whole(q8);
  }
  Gpu::check(record_matmul(device, gpu.recorder(), w, in, n, BufferSpan::whole(yb), y_stride, y_col), "record_matmul");
}

double tolerance(Arithmetic a, GgmlType t) {
  if (a == Arithmetic::Float) return kNmseMatmul;
  return cpu_int8_per_32(t) ? kNmseInt8 : kNmseInt8Mins;
}

WeightView view_of(const HostWeights& w, const Buffer& b, int64_t rows) {
  return WeightView{w.type, w.cols, rows, w.row_bytes, BufferSpan::whole(b), 0, 0, 1};
}

std::string type_name_of(const ::testing::TestParamInfo<GgmlType>& info) { return kernels::type_name(info.param); }

class VkMatmulTypes : public ::testing::TestWithParam<GgmlType> {
 protected:
  void SetUp() override {
    device_ = testing::open_test_device({}, &why_);
    if (!device_) GTEST_SKIP() << "no Vulkan device: " << why_;
  }
  GgmlType type() const { return GetParam(); }

  std::unique_ptr<Device> device_;
  std::string why_;
};

// ------------------------------------------------------------------------------------ get_rows

void check_get_rows_bit_exact(Device& device, GgmlType type) {
  for (int64_t cols : test_cols(type)) {
    SCOPED_TRACE("cols=" + std::to_string(cols));
    const int64_t table_rows = 37;
    const HostWeights w = make_weights(type, cols, table_rows, 100 + static_cast<uint32_t>(cols));
    const std::vector<int32_t> ids = {0, 36, 5, 5, 17, 2, 40, 1, 33, -1, 12};  // 40 and -1: outside
    const int64_t n = static_cast<int64_t>(ids.size());
    const float kFill = 777.0f;  // what an output row the lookup does not write keeps
    for (const OutsideIds outside : {OutsideIds::Zero, OutsideIds::Keep}) {
      for (float scale : {1.0f, 0.125f, 27.712812921102035f}) {
        SCOPED_TRACE("scale=" + std::to_string(scale) + (outside == OutsideIds::Keep ? " keep" : " zero"));
        Gpu gpu(device, 16);
        const Buffer& wb = gpu.upload(w.bytes);
        const Buffer& ib = gpu.upload(ids);
        const Buffer& ob = gpu.filled(static_cast<size_t>(n * cols), kFill);
        gpu.begin();
        Gpu::check(record_get_rows(device, gpu.recorder(), view_of(w, wb, table_rows), BufferSpan::whole(ib), n, scale,
                                   BufferSpan::whole(ob), outside),
                   "record_get_rows");
        gpu.submit();
        const auto got = gpu.read<float>(ob, static_cast<size_t>(n * cols));
        const float outside_value = outside == OutsideIds::Keep ? kFill : 0.0f;
        int64_t mismatches = 0, first = -1;
        for (int64_t i = 0; i < n; ++i) {
          const bool valid = ids[i] >= 0 && ids[i] < table_rows;
          for (int64_t c = 0; c < cols; ++c) {
            const float want = valid ? w.decoded[static_cast<size_t>(ids[i] * cols + c)] * scale : outside_value;
            const float have = got[static_cast<size_t>(i * cols + c)];
            if (std::memcmp(&want, &have, sizeof(float)) != 0) {
              if (first < 0) first = i * cols + c;
              ++mismatches;
            }
          }
        }
        EXPECT_EQ(mismatches, 0) << "first at output " << first / cols << " column " << first % cols << ": got "
                                 << got[static_cast<size_t>(std::max<int64_t>(first, 0))];
      }
    }
  }
}

TEST_P(VkMatmulTypes, GetRowsBitExact) { check_get_rows_bit_exact(*device_, type()); }

class VkGridTypeDecoding : public VkMatmulTypes {};

TEST_P(VkGridTypeDecoding, GetRowsBitExact) { check_get_rows_bit_exact(*device_, type()); }

INSTANTIATE_TEST_SUITE_P(GridIQuants, VkGridTypeDecoding, ::testing::ValuesIn(kOtherGridTypes), type_name_of);

// -------------------------------------------------------------------------------------- matmul

TEST_P(VkMatmulTypes, MatmulMatchesReference) {
  Device& device = *device_;
  const int64_t kMaxRows = 130, kMaxN = 70;
  double worst = 0.0;
  for (int64_t cols : test_cols(type())) {
    const HostWeights w = make_weights(type(), cols, kMaxRows, 200 + static_cast<uint32_t>(cols));
    std::mt19937 rng(300 + static_cast<uint32_t>(cols));
    const auto x = testing::random_activations(cols, kMaxN, rng);
    const auto ref_float = reference(w, 0, kMaxRows, x, kMaxN);
    const auto ref_int8 = has_int8_matvec(type()) ? reference(w, 0, kMaxRows, x, kMaxN, Arithmetic::Int8) : ref_float;
    for (const auto& [kernel, portable] : kernels_for(type())) {
      Overrides scope(kernel.overrides);
      PortableInt8 variant(portable);
      Gpu gpu(device, 16);
      const Buffer& wb = gpu.upload(w.bytes);
      const Buffer& xb = gpu.upload(x);
      struct Case {
        int64_t rows, n;
        const Buffer* y;
      };
      std::vector<Case> cases;
      gpu.begin();
      for (int64_t rows : {1, 7, 33, 130}) {
        for (int64_t n : {1, 2, 3, 9, 17, 70}) {
          const Buffer& yb = gpu.filled(static_cast<size_t>(n * rows), 777.0f);
          record_product(gpu, device, view_of(w, wb, rows), xb, n, yb, rows, 0);
          cases.push_back({rows, n, &yb});
        }
      }
      gpu.submit();
      for (const Case& c : cases) {
        SCOPED_TRACE("cols=" + std::to_string(cols) + " rows=" + std::to_string(c.rows) + " n=" +
                     std::to_string(c.n) + " " + kernel.name);
        const Arithmetic arithmetic = arithmetic_of(device, type(), cols, c.n);
        const auto& ref_all = arithmetic == Arithmetic::Int8 ? ref_int8 : ref_float;
        std::vector<double> want(static_cast<size_t>(c.n * c.rows));
        for (int64_t t = 0; t < c.n; ++t) {
          for (int64_t r = 0; r < c.rows; ++r) {
            want[static_cast<size_t>(t * c.rows + r)] = ref_all[static_cast<size_t>(t * kMaxRows + r)];
          }
        }
        const double e = nmse(gpu.read<float>(*c.y, want.size()), want);
        worst = std::max(worst, e);
        EXPECT_LT(e, tolerance(arithmetic, type()));
      }
    }
  }
  RecordProperty("worst_nmse", std::to_string(worst));
  std::printf("[ %s worst NMSE %.3g ]\n", kernels::type_name(type()), worst);
}

// Row slices (byte_offset, rows starting 2 bytes past a word for 2-aligned types) and output
// columns inside wider y rows.
TEST_P(VkMatmulTypes, RowSlicesAndOutputColumns) {
  Device& device = *device_;
  const auto layout = weight_layout(type());
  ASSERT_TRUE(layout.has_value());
  const int64_t cols = is_superblock(type()) ? 256 : 32, rows = 41;
  const HostWeights w = make_weights(type(), cols, rows, 400);
  std::mt19937 rng(401);
  const auto x = testing::random_activations(cols, 12, rng);
  // The first slice row whose start is row_align-aligned, past row 0 (row 1 or 3 for odd
  // 2-aligned row sizes: byte offsets that are 2 mod 4).
  int64_t first = 1;
  while ((first * w.row_bytes) % layout->row_align != 0) ++first;
  const int64_t slice_rows = 19, y_stride = slice_rows + 11, y_col = 5;
  for (int64_t n : {1, 5, 12}) {
    for (const auto& [kernel, portable] : kernels_for(type())) {
      SCOPED_TRACE("n=" + std::to_string(n) + " " + kernel.name + " first row " + std::to_string(first));
      Overrides scope(kernel.overrides);
      PortableInt8 variant(portable);
      const Arithmetic arithmetic = arithmetic_of(device, type(), cols, n);
      Gpu gpu(device, 16);
      const Buffer& wb = gpu.upload(w.bytes);
      const Buffer& xb = gpu.upload(x);
      const Buffer& yb = gpu.filled(static_cast<size_t>(n * y_stride), 777.0f);
      WeightView v = view_of(w, wb, slice_rows);
      v.byte_offset = static_cast<uint32_t>(first * w.row_bytes);
      gpu.begin();
      record_product(gpu, device, v, xb, n, yb, y_stride, y_col);
      gpu.submit();
      const auto got = gpu.read<float>(yb, static_cast<size_t>(n * y_stride));
      const auto ref = reference(w, first, slice_rows, x, n, arithmetic);
      std::vector<float> cols_got;
      int64_t touched = 0;
      for (int64_t t = 0; t < n; ++t) {
        for (int64_t j = 0; j < y_stride; ++j) {
          const float g = got[static_cast<size_t>(t * y_stride + j)];
          if (j >= y_col && j < y_col + slice_rows) {
            cols_got.push_back(g);
          } else if (g != 777.0f) {
            ++touched;
          }
        }
      }
      EXPECT_EQ(touched, 0) << "columns outside [y_col_offset, y_col_offset + rows) were written";
      EXPECT_LT(nmse(cols_got, ref), tolerance(arithmetic, type()));
    }
  }
}

// -------------------------------------------------------------------------------------- experts

TEST_P(VkMatmulTypes, ExpertsMatchReference) {
  Device& device = *device_;
  const auto layout = weight_layout(type());
  ASSERT_TRUE(layout.has_value());
  const int64_t cols = is_superblock(type()) ? 256 : 96, rows = 33, n_mats = 4, n_tokens = 5, k_used = 2;
  const HostWeights w = make_weights(type(), cols, rows * n_mats, 500);
  // Stack with a padded stride between the matrices.
  const uint64_t matrix_bytes = static_cast<uint64_t>(rows * w.row_bytes) + static_cast<uint64_t>(layout->row_align) * 8;
  std::vector<uint8_t> stacked(matrix_bytes * n_mats, 0xEE);
  for (int64_t m = 0; m < n_mats; ++m) {
    std::memcpy(stacked.data() + m * matrix_bytes, w.bytes.data() + m * rows * w.row_bytes,
                static_cast<size_t>(rows * w.row_bytes));
  }
  const std::vector<int32_t> ids = {3, 0, 1, 1, 2, 7, 0, 3, 2, 1};  // 7: out of range
  std::mt19937 rng(501);
  const auto x = testing::random_activations(cols, n_tokens * k_used, rng);
  for (int config = 0; config < 8; ++config) {
    const bool per_pair = (config & 1) != 0;
    const int rowwise = (config >> 1) & 1;
    const bool portable = (config & 4) != 0;
    if (portable && !has_int8_matvec(type())) continue;
    SCOPED_TRACE(std::string(per_pair ? "x per pair" : "x per token") + (rowwise ? ", rowwise" : "") +
                 (portable ? ", portable int8" : ""));
    Overrides scope(path(MatmulOverrides::Path::Auto, rowwise));
    PortableInt8 variant(portable);
    const Arithmetic arithmetic = arithmetic_of(device, type(), cols, n_tokens * k_used, true);
    Gpu gpu(device, 16);
    const Buffer& wb = gpu.upload(stacked);
    const Buffer& xb = gpu.upload(x);
    const Buffer& ib = gpu.upload(ids);
    const Buffer& yb = gpu.filled(static_cast<size_t>(n_tokens * k_used * rows), 777.0f);
    WeightView v{type(), cols, rows, w.row_bytes, BufferSpan::whole(wb), 0, matrix_bytes, n_mats};
    gpu.begin();
    MatmulInput in(BufferSpan::whole(xb));
    if (arithmetic == Arithmetic::Int8) {
      const int64_t x_rows = per_pair ? n_tokens * k_used : n_tokens;
      const Buffer& q8 = gpu.allocate(q8_activation_bytes(cols, x_rows));
      Gpu::check(record_quantize_q8(device, gpu.recorder(), BufferSpan::whole(xb), x_rows, cols, BufferSpan::whole(q8)),
                 "record_quantize_q8");
      in.q8 = BufferSpan::whole(q8);
    }
    Gpu::check(record_matmul_experts(device, gpu.recorder(), v, in, per_pair, BufferSpan::whole(ib), n_tokens, k_used,
                                     BufferSpan::whole(yb)),
               "record_matmul_experts");
    gpu.submit();
    const auto got = gpu.read<float>(yb, static_cast<size_t>(n_tokens * k_used * rows));
    std::vector<double> want(got.size(), 0.0);
    for (int64_t pair = 0; pair < n_tokens * k_used; ++pair) {
      const int32_t e = ids[static_cast<size_t>(pair)];
      if (e < 0 || e >= n_mats) continue;
      const int64_t xrow = per_pair ? pair : pair / k_used;
      const std::vector<float> xr(x.begin() + xrow * cols, x.begin() + (xrow + 1) * cols);
      const auto r = reference(w, e * rows, rows, xr, 1, arithmetic);
      std::copy(r.begin(), r.end(), want.begin() + pair * rows);
    }
    EXPECT_LT(nmse(got, want), tolerance(arithmetic, type()));
    for (int64_t r = 0; r < rows; ++r) EXPECT_EQ(got[static_cast<size_t>(5 * rows + r)], 0.0f) << "out-of-range id";
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, VkMatmulTypes, ::testing::ValuesIn(kAllTypes), type_name_of);

// ------------------------------------------------------------------- sizes, tiles, failures

// Matvec at several workgroup sizes, rows and tokens per workgroup; matmat at several tiles.
TEST(VkMatmul, WorkgroupSizesAndTilesAgree) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  for (GgmlType type : {GgmlType::Q4_0, GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::F16}) {
    const int64_t cols = is_superblock(type) ? 768 : 160, rows = 45, n = 11;
    const HostWeights w = make_weights(type, cols, rows, 600);
    std::mt19937 rng(601);
    const auto x = testing::random_activations(cols, n, rng);
    std::vector<MatmulOverrides> configs;
    for (int rowwise : {0, 1}) {
      for (uint32_t wg : {8u, 16u, 64u, 256u}) {
        for (uint32_t r : {1u, 3u, 8u}) {
          MatmulOverrides o = path(MatmulOverrides::Path::Matvec, rowwise);
          o.matvec_workgroup = wg;
          o.matvec_rows = r;
          o.matvec_tokens = r == 3 ? 4 : 2;
          configs.push_back(o);
        }
      }
    }
    for (auto [bm, bn, tm, tn] : {std::tuple{16u, 8u, 4u, 1u}, {32u, 32u, 4u, 4u}, {64u, 16u, 8u, 2u}, {8u, 64u, 1u, 8u}}) {
      MatmulOverrides o = path(MatmulOverrides::Path::Matmat);
      o.matmat_bm = bm;
      o.matmat_bn = bn;
      o.matmat_tm = tm;
      o.matmat_tn = tn;
      configs.push_back(o);
    }
    for (const MatmulOverrides& o : configs) {
      SCOPED_TRACE(std::string(kernels::type_name(type)) + (o.matvec_rowwise == 1 ? " rowwise" : "") +
                   " wg=" + std::to_string(o.matvec_workgroup) + " rows=" +
                   std::to_string(o.matvec_rows) + " tile=" + std::to_string(o.matmat_bm) + "x" +
                   std::to_string(o.matmat_bn) + "/" + std::to_string(o.matmat_tm) + "x" + std::to_string(o.matmat_tn));
      Overrides scope(o);
      Gpu gpu(*device, 16);
      const Buffer& wb = gpu.upload(w.bytes);
      const Buffer& xb = gpu.upload(x);
      const Buffer& yb = gpu.filled(static_cast<size_t>(n * rows), 777.0f);
      gpu.begin();
      record_product(gpu, *device, view_of(w, wb, rows), xb, n, yb, rows, 0);
      gpu.submit();
      const Arithmetic arithmetic = arithmetic_of(*device, type, cols, n);
      EXPECT_LT(nmse(gpu.read<float>(yb, static_cast<size_t>(n * rows)), reference(w, 0, rows, x, n, arithmetic)),
                tolerance(arithmetic, type));
    }
  }
  {
    // The workgroup-size override of the other ops applies to get_rows and matmat too.
    WorkgroupSize size(32);
    Overrides scope(path(MatmulOverrides::Path::Matmat));
    const HostWeights w = make_weights(GgmlType::Q8_0, 96, 9, 602);
    std::mt19937 rng(603);
    const auto x = testing::random_activations(96, 20, rng);
    Gpu gpu(*device, 16);
    const Buffer& wb = gpu.upload(w.bytes);
    const Buffer& xb = gpu.upload(x);
    const Buffer& yb = gpu.filled(20 * 9, 777.0f);
    gpu.begin();
    Gpu::check(record_matmul(*device, gpu.recorder(), view_of(w, wb, 9), BufferSpan::whole(xb), 20,
                             BufferSpan::whole(yb), 9, 0),
               "record_matmul");
    gpu.submit();
    EXPECT_LT(nmse(gpu.read<float>(yb, 20 * 9), reference(w, 0, 9, x, 20)), kNmseMatmul);
  }
}

// The comparison is sharp enough to see a scale off by 1%, one wrong element per 32, and the
// int8 quantization of x.
TEST(VkMatmul, WrongReferencesFail) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  const int64_t cols = 96, rows = 7, n = 3;
  const HostWeights w = make_weights(GgmlType::Q4_0, cols, rows, 700);
  std::mt19937 rng(701);
  const auto x = testing::random_activations(cols, n, rng);
  auto run = [&](const MatmulOverrides& o) {
    Overrides scope(o);
    Gpu gpu(*device, 16);
    const Buffer& wb = gpu.upload(w.bytes);
    const Buffer& xb = gpu.upload(x);
    const Buffer& yb = gpu.filled(n * rows, 0.0f);
    gpu.begin();
    record_product(gpu, *device, view_of(w, wb, rows), xb, n, yb, rows, 0);
    gpu.submit();
    return gpu.read<float>(yb, n * rows);
  };
  MatmulOverrides float_matvec;
  float_matvec.int8_matvec = 0;
  const auto got = run(float_matvec);
  EXPECT_LT(nmse(got, reference(w, 0, rows, x, n)), kNmseMatmul);
  HostWeights scaled = w, one_wrong = w;
  for (float& v : scaled.decoded) v *= 1.01f;
  for (size_t i = 0; i < one_wrong.decoded.size(); i += 32) one_wrong.decoded[i] = one_wrong.decoded[i + 1];
  EXPECT_GT(nmse(got, reference(scaled, 0, rows, x, n)), 1e3 * kNmseMatmul);
  EXPECT_GT(nmse(got, reference(one_wrong, 0, rows, x, n)), 1e3 * kNmseMatmul);

  // The int8 matvec (the default for Q4_0) matches the CPU's int8 product, and the float product
  // only up to the quantization of x, which the int8 tolerance sees; so does one nibble changed
  // per block (byte 2 + 5 of each 18-byte block) or a scale off by 1%.
  const auto got8 = run({});
  const auto ref8 = reference(w, 0, rows, x, n, Arithmetic::Int8);
  EXPECT_LT(nmse(got8, ref8), kNmseInt8);
  const double vs_float = nmse(got8, reference(w, 0, rows, x, n));
  EXPECT_GT(vs_float, 1e3 * kNmseInt8);
  EXPECT_LT(vs_float, 1e-2);
  std::vector<double> scaled8 = ref8;
  for (double& v : scaled8) v *= 1.01;
  EXPECT_GT(nmse(got8, scaled8), 1e3 * kNmseInt8);
  HostWeights nibble = w;
  for (size_t b = 7; b < nibble.bytes.size(); b += 18) nibble.bytes[b] ^= 0x01;
  EXPECT_GT(nmse(got8, reference(nibble, 0, rows, x, n, Arithmetic::Int8)), 1e3 * kNmseInt8);
}

TEST(VkMatmul, RejectsBadShapesWithMessages) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  const HostWeights w = make_weights(GgmlType::Q4_K, 256, 4, 800);
  Gpu gpu(*device, 16);
  const Buffer& wb = gpu.upload(w.bytes);
  const Buffer& xb = gpu.allocate(4 * 256 * 4);
  const Buffer& yb = gpu.allocate(4 * 4 * 4);
  gpu.begin();
  auto matmul = [&](WeightView v, int64_t n, int64_t y_stride, int64_t y_col) {
    return record_matmul(*device, gpu.recorder(), v, BufferSpan::whole(xb), n, BufferSpan::whole(yb), y_stride, y_col);
  };
  WeightView v = view_of(w, wb, 4);
  EXPECT_TRUE(matmul(v, 4, 4, 0));
  WeightView bad_cols = v;
  bad_cols.cols = 128;
  EXPECT_NE(matmul(bad_cols, 1, 4, 0).message().find("multiple of 256"), std::string::npos);
  WeightView misaligned = v;
  misaligned.byte_offset = 8;
  misaligned.rows = 1;
  EXPECT_NE(matmul(misaligned, 1, 4, 0).message().find("byte_offset"), std::string::npos);
  WeightView too_many_rows = v;
  too_many_rows.rows = 40;
  EXPECT_NE(matmul(too_many_rows, 1, 40, 0).message().find("weights"), std::string::npos);
  EXPECT_NE(matmul(v, 5, 4, 0).message().find(": x "), std::string::npos);
  EXPECT_NE(matmul(v, 1, 4, 2).message().find("y_stride"), std::string::npos);
  WeightView nvfp4 = v;
  nvfp4.type = GgmlType::NVFP4;
  EXPECT_NE(matmul(nvfp4, 1, 4, 0).message().find("no Vulkan shader"), std::string::npos);
  gpu.submit();
}

}  // namespace
}  // namespace inferscope::vulkan
