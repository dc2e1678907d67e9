// Matmul entry points: activation packing, the scalar reference, run-time dispatch to the SIMD
// variants (matmul_avx2.cpp, matmul_avx512.cpp with matmul_dot_avx512.cpp, matmul_amx_avx512.cpp)
// and their scratch memory.
#include "kernels/cpu/matmul.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "kernels/formats/fp16.h"
#include "kernels/cpu/dequantize.h"
#include "kernels/cpu/matmul_dequantized.h"
#include "kernels/cpu/matmul_internal.h"
#include "kernels/cpu/matmul_kquant.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cpu/sparse24.h"

namespace inferscope::kernels {

namespace detail {

namespace {

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};

struct ScratchSlot {
  std::unique_ptr<void, AlignedFree> data;
  size_t bytes = 0;
};

}  // namespace

void* thread_scratch(int slot, size_t bytes) {
  thread_local ScratchSlot slots[4];
  assert(slot >= 0 && slot < 4);
  ScratchSlot& s = slots[slot];
  if (s.bytes < bytes) {
    const size_t rounded = (bytes + 4095) / 4096 * 4096;
    void* p = std::aligned_alloc(64, rounded);
    if (!p) std::abort();  // scratch is small (panels of a few hundred KiB)
    s.data.reset(p);
    s.bytes = rounded;
  }
  return s.data.get();
}

}  // namespace detail

namespace {

using detail::MatmulArgs;

void pack_q8_scalar(const float* x, int64_t k, uint8_t* packed, int64_t t_begin, int64_t t_end) {
  const detail::Q8Layout l = detail::q8_layout(k);
  for (int64_t t = t_begin; t < t_end; ++t) {
    uint8_t* row = packed + t * l.row_stride;
    auto* qs = reinterpret_cast<int8_t*>(row);
    auto* d = reinterpret_cast<float*>(row + l.d_offset);
    auto* sums = reinterpret_cast<int32_t*>(row + l.sum_offset);
    for (int64_t b = 0; b < l.n_blocks; ++b) {
      d[b] = round_to_fp16(quantize_block_q8(x + t * k + b * detail::kQBlock, qs + b * detail::kQBlock));
      int32_t sum = 0;
      for (int64_t j = 0; j < detail::kQBlock; ++j) sum += qs[b * detail::kQBlock + j];
      sums[b] = sum;
    }
    std::memset(qs + k, 0, static_cast<size_t>(l.d_offset - k));
  }
}

// Reference dot products of one weight row with one packed token.
double dot_reference_float(GgmlType w, const uint8_t* row, const float* x, int64_t k) {
  double sum = 0.0;
  for (int64_t i = 0; i < k; ++i) {
    float wi = 0.0f;
    switch (w) {
      case GgmlType::F32: std::memcpy(&wi, row + 4 * i, 4); break;
      case GgmlType::F16: wi = fp16_to_fp32(load_u16(row + 2 * i)); break;
      case GgmlType::BF16: wi = bf16_to_fp32(load_u16(row + 2 * i)); break;
      default: break;
    }
    sum += static_cast<double>(wi) * static_cast<double>(x[i]);
  }
  return sum;
}

// Integer values q[32], scale d and min m of one 32-block: the block decodes to d * q + m.
void decode_block_ints(GgmlType w, const uint8_t* block, int32_t* q, float& d, float& m) {
  const detail::Q32Block g = detail::q32_block(w);
  d = detail::q32_scale(w, block);
  m = g.has_min ? fp16_to_fp32(load_u16(block + 2)) : 0.0f;
  if (w == GgmlType::Q8_0) {
    for (int j = 0; j < 32; ++j) q[j] = reinterpret_cast<const int8_t*>(block + g.qs)[j];
    return;
  }
  uint32_t qh = 0;
  if (g.qh >= 0) {
    for (int i = 0; i < 4; ++i) qh |= static_cast<uint32_t>(block[g.qh + i]) << (8 * i);
  }
  for (int j = 0; j < 32; ++j) {
    const uint8_t byte = block[g.qs + j % 16];
    const int32_t nibble = j < 16 ? (byte & 0x0F) : (byte >> 4);
    const int32_t high = static_cast<int32_t>((qh >> j) & 1u) << 4;
    const int8_t* levels = detail::q32_levels(w);
    q[j] = levels ? levels[nibble] : (nibble | high) - detail::q8_weight_offset(w);
  }
}

double dot_reference_q8(GgmlType w, const uint8_t* row, const uint8_t* act, const detail::Q8Layout& l) {
  const auto* qa = reinterpret_cast<const int8_t*>(act);
  const auto* da = reinterpret_cast<const float*>(act + l.d_offset);
  const auto* sa = reinterpret_cast<const int32_t*>(act + l.sum_offset);
  const int64_t block_bytes = detail::q32_block(w).bytes;
  double sum = 0.0;
  for (int64_t b = 0; b < l.n_blocks; ++b) {
    int32_t q[32];
    float dw, mw;
    decode_block_ints(w, row + b * block_bytes, q, dw, mw);
    const int8_t* a = qa + b * detail::kQBlock;
    int32_t dot = 0;
    for (int64_t j = 0; j < detail::kQBlock; ++j) dot += q[j] * a[j];
    sum += static_cast<double>(da[b]) * (static_cast<double>(dw) * dot + static_cast<double>(mw) * sa[b]);
  }
  return sum;
}

}  // namespace

bool matmul_supported(GgmlType w) {
  if (detail::is_q8k_weight(w) || detail::is_dequantized_weight(w)) return true;
  switch (w) {
    case GgmlType::F32:
    case GgmlType::F16:
    case GgmlType::BF16:
    case GgmlType::F16_2OF4:
    case GgmlType::Q8_0:
    case GgmlType::Q4_0:
    case GgmlType::Q4_1:
    case GgmlType::Q5_0:
    case GgmlType::Q5_1:
    case GgmlType::IQ4_NL:
    case GgmlType::MXFP4: return true;
    default: return false;
  }
}

size_t packed_activation_bytes(GgmlType w, int64_t k, int64_t n_tokens) {
  assert(matmul_supported(w));
  if (detail::is_q8k_weight(w)) return static_cast<size_t>(detail::q8k_layout(k).row_stride * n_tokens);
  if (detail::is_quantized(w)) return static_cast<size_t>(detail::q8_layout(k).row_stride * n_tokens);
  return static_cast<size_t>(detail::f32_row_stride(k) * 4 * n_tokens);
}

void pack_activations(GgmlType w, const float* x, int64_t k, int64_t n_tokens, void* packed, int64_t t_begin,
                      int64_t t_end) {
  assert(matmul_supported(w));
  assert(k % type_info(w).block_size == 0);
  assert(0 <= t_begin && t_begin <= t_end && t_end <= n_tokens);
  (void)n_tokens;
  auto* out = static_cast<uint8_t*>(packed);
  if (detail::is_q8k_weight(w)) {
    detail::pack_q8k(x, k, out, t_begin, t_end);
    return;
  }
  if (detail::is_quantized(w)) {
    if (active_simd_level() >= SimdLevel::Avx512) {
      detail::pack_q8_avx512(x, k, out, t_begin, t_end);
    } else {
      pack_q8_scalar(x, k, out, t_begin, t_end);
    }
    return;
  }
  const int64_t stride = detail::f32_row_stride(k);
  for (int64_t t = t_begin; t < t_end; ++t) {
    float* row = reinterpret_cast<float*>(out) + t * stride;
    std::memcpy(row, x + t * k, static_cast<size_t>(k) * sizeof(float));
    std::memset(row + k, 0, static_cast<size_t>(stride - k) * sizeof(float));
  }
}

void matmul_rows_reference(GgmlType w, const void* weights, int64_t k, const void* packed, int64_t n_tokens, float* y,
                           int64_t y_stride, int64_t row_begin, int64_t row_end) {
  assert(matmul_supported(w));
  const int64_t rb = row_bytes(w, k);
  const auto* wbytes = static_cast<const uint8_t*>(weights);
  const auto* act = static_cast<const uint8_t*>(packed);
  if (detail::is_q8k_weight(w)) {
    detail::matmul_kquant_reference({w, wbytes, k, rb, act, n_tokens, y, y_stride, row_begin, row_end});
    return;
  }
  if (detail::is_quantized(w)) {
    const detail::Q8Layout l = detail::q8_layout(k);
    for (int64_t r = row_begin; r < row_end; ++r) {
      for (int64_t t = 0; t < n_tokens; ++t) {
        y[t * y_stride + r] = static_cast<float>(dot_reference_q8(w, wbytes + r * rb, act + t * l.row_stride, l));
      }
    }
    return;
  }
  const int64_t stride = detail::f32_row_stride(k);
  if (w == GgmlType::F16_2OF4) {
    matmul_sparse24_reference(wbytes, k, rb, reinterpret_cast<const float*>(act), stride, n_tokens, y, y_stride,
                              row_begin, row_end);
    return;
  }
  if (detail::is_dequantized_weight(w)) {
    std::vector<float> row(static_cast<size_t>(k));
    for (int64_t r = row_begin; r < row_end; ++r) {
      dequantize_row(w, wbytes + r * rb, row.data(), k);
      for (int64_t t = 0; t < n_tokens; ++t) {
        const float* x = reinterpret_cast<const float*>(act) + t * stride;
        double sum = 0.0;
        for (int64_t i = 0; i < k; ++i) sum += static_cast<double>(row[static_cast<size_t>(i)]) * x[i];
        y[t * y_stride + r] = static_cast<float>(sum);
      }
    }
    return;
  }
  for (int64_t r = row_begin; r < row_end; ++r) {
    for (int64_t t = 0; t < n_tokens; ++t) {
      const float* x = reinterpret_cast<const float*>(act) + t * stride;
      y[t * y_stride + r] = static_cast<float>(dot_reference_float(w, wbytes + r * rb, x, k));
    }
  }
}

namespace detail {

bool bf16_dot_products(int64_t k, int64_t n_tokens) {
  return active_simd_level() == SimdLevel::Avx512 && cpu_features().avx512bf16 && k % 2 == 0 &&
         n_tokens >= kFloatPanelMinTokens;
}

}  // namespace detail

std::string matmul_kernel_name(GgmlType w, int64_t k, int64_t n_tokens) {
  if (detail::is_dequantized_weight(w)) return "rows decoded to F32 panels, then " + matmul_kernel_name(GgmlType::F32, k, n_tokens);
  const SimdLevel level = active_simd_level();
  if (level == SimdLevel::Scalar) return "scalar reference";
  const std::string isa = level == SimdLevel::Avx2 ? "AVX2" : "AVX-512";
  if (w == GgmlType::F16_2OF4) return isa + " 2:4 sparse rows (gathers), F32 activations";
  if (detail::is_q8k_weight(w)) {
    const bool panels = n_tokens >= detail::kKQuantPanelMinTokens;
    return isa + (level == SimdLevel::Avx2 ? " int8" : " VNNI int8") + (panels ? " panels" : " dot") +
           ", Q8_K activations";
  }
  if (detail::is_quantized(w)) {
    if (level == SimdLevel::Avx2) return "AVX2 int8, Q8_0 activations";
    return std::string("AVX-512 VNNI int8") + (n_tokens >= detail::kQuantPanelMinTokens ? " panels" : " dot") +
           ", Q8_0 activations";
  }
  if (level == SimdLevel::Amx && n_tokens >= detail::kAmxMinTokens && (w == GgmlType::F16 || w == GgmlType::BF16)) {
    return "AMX bf16 tiles, activations split in two bf16 terms";
  }
  if (level == SimdLevel::Avx2) return "AVX2 F32 FMA";
  if (w == GgmlType::BF16 && detail::bf16_dot_products(k, n_tokens)) {
    return "AVX-512 BF16 dot products (vdpbf16ps), BF16 activations";
  }
  return std::string("AVX-512 F32 FMA") + (n_tokens >= detail::kFloatPanelMinTokens ? " panels" : " dot");
}

namespace {

// The SIMD kernels for `a` at `level` (not the scalar reference).
void run_simd_kernel(const MatmulArgs& a, SimdLevel level) {
  if (detail::is_q8k_weight(a.type)) {
    if (level == SimdLevel::Avx2) {
      detail::matmul_kquant_avx2(a);
    } else {
      detail::matmul_kquant_avx512(a);  // Amx too: no AMX tiles for the super-block types
    }
    return;
  }
  switch (level) {
    case SimdLevel::Avx2: detail::matmul_avx2(a); break;
    case SimdLevel::Avx512: detail::matmul_avx512(a); break;
    default: detail::matmul_amx(a); break;
  }
}

// A batch-invariant product of many tokens in blocks of weight rows (about 256 KiB, a multiple
// of 16 rows), so that each block is read from memory once and serves every token from cache.
void run_in_row_blocks(MatmulArgs a, SimdLevel level) {
  constexpr int64_t kBlockBytes = 256 * 1024;
  const int64_t rows = std::max<int64_t>(16, kBlockBytes / a.row_bytes / 16 * 16);
  const int64_t end = a.row_end;
  for (int64_t r = a.row_begin; r < end; r += rows) {
    a.row_begin = r;
    a.row_end = std::min(end, r + rows);
    run_simd_kernel(a, level);
  }
}

}  // namespace

void matmul_rows(GgmlType w, const void* weights, int64_t k, const void* packed, int64_t n_tokens, float* y,
                 int64_t y_stride, int64_t row_begin, int64_t row_end, TokenBatching batching) {
  assert(matmul_supported(w));
  assert(k > 0 && k % type_info(w).block_size == 0);
  if (row_begin >= row_end || n_tokens <= 0) return;
  if (detail::is_dequantized_weight(w)) {
    detail::matmul_dequantized(w, static_cast<const uint8_t*>(weights), k, packed, n_tokens, y, y_stride, row_begin,
                               row_end, batching);
    return;
  }
  const SimdLevel level = active_simd_level();
  if (level == SimdLevel::Scalar) {
    matmul_rows_reference(w, weights, k, packed, n_tokens, y, y_stride, row_begin, row_end);
    return;
  }
  if (w == GgmlType::F16_2OF4) {
    const auto sparse24 = level == SimdLevel::Avx2 ? detail::matmul_sparse24_avx2 : detail::matmul_sparse24_avx512;
    sparse24(static_cast<const uint8_t*>(weights), k, row_bytes(w, k), static_cast<const float*>(packed),
             detail::f32_row_stride(k), n_tokens, y, y_stride, row_begin, row_end);
    return;
  }
  const bool invariant = batching == TokenBatching::Invariant;
  const MatmulArgs args{w,         static_cast<const uint8_t*>(weights), k,        row_bytes(w, k),
                        static_cast<const uint8_t*>(packed), n_tokens,    y,        y_stride,
                        row_begin, row_end,                              invariant};
  if (invariant && n_tokens > 1) {
    run_in_row_blocks(args, level);
  } else {
    run_simd_kernel(args, level);
  }
}

}  // namespace inferscope::kernels
