// Internal to the matmul kernels: the packed-activation layout shared by every SIMD variant and
// the entry points of the variants. Included by files built with AVX2/AVX-512 flags, so it
// only has internal-linkage helpers (no shared inline code the linker could mix up).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/formats/e8m0.h"
#include "kernels/formats/fp16.h"
#include "kernels/formats/ggml_type.h"

namespace inferscope::kernels::detail {

constexpr int64_t kQBlock = 32;  // elements per block of every 32-block weight type

static inline int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// Packed activations for the 32-block weight types (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL), one
// row per token, each row 64-byte aligned relative to the buffer start:
//   int8_t  qs[round_up(k, 64)]  values quantized per 32-block (Q8_0 rule, F16-rounded scale)
//   float   d[k / 32]            block scales
//   int32_t sum[k / 32]          sum of the block's qs: kernels that multiply unsigned weights
//                                u = q + offset (q8_weight_offset) subtract offset * sum, and
//                                Q4_1 / Q5_1 need it for the min term m * d * sum
struct Q8Layout {
  int64_t n_blocks;
  int64_t d_offset;
  int64_t sum_offset;
  int64_t row_stride;
};

static inline Q8Layout q8_layout(int64_t k) {
  Q8Layout l;
  l.n_blocks = k / kQBlock;
  l.d_offset = round_up(k, 64);
  l.sum_offset = l.d_offset + 4 * l.n_blocks;
  l.row_stride = round_up(l.sum_offset + 4 * l.n_blocks, 64);
  return l;
}

// Block geometry of the 32-block weight types (GGUF-FORMATS.md 3.x): bytes per block, where the
// 16 bytes of nibbles start, where the 32 high bits (Q5_x) start, and whether a min follows d.
struct Q32Block {
  int64_t bytes;
  int64_t qs;
  int64_t qh;    // -1: no high bits
  bool has_min;  // f16 m right after the f16 d
};

static constexpr Q32Block q32_block(GgmlType w) {
  switch (w) {
    case GgmlType::Q4_1: return {20, 4, -1, true};
    case GgmlType::Q5_0: return {22, 6, 2, false};
    case GgmlType::Q5_1: return {24, 8, 4, true};
    case GgmlType::Q8_0: return {34, 2, -1, false};
    case GgmlType::MXFP4: return {17, 1, -1, false};  // its scale is one E8M0 byte
    default: return {18, 2, -1, false};  // Q4_0, IQ4_NL
  }
}

// The offset that makes the integer weight values unsigned for u8 x s8 products: Q4_0 nibbles
// are q + 8, Q5_0 values q + 16; Q8_0 and IQ4_NL kernels may use w + 128; Q4_1 / Q5_1 values
// are unsigned already.
static constexpr int32_t q8_weight_offset(GgmlType w) {
  switch (w) {
    case GgmlType::Q4_0: return 8;
    case GgmlType::Q5_0: return 16;
    case GgmlType::Q8_0:
    case GgmlType::IQ4_NL:
    case GgmlType::MXFP4: return 128;
    default: return 0;
  }
}

// IQ4_NL's non-linear levels (GGUF-FORMATS.md, IQ4_NL), indexed by the nibble.
constexpr int8_t kIq4nlLevels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// The scale d of one 32-block (an F16 at its start; MXFP4's E8M0 byte, halved: e8m0.h).
static inline float q32_scale(GgmlType w, const uint8_t* block) {
  if (w == GgmlType::MXFP4) return e8m0_to_fp32_half(block[0]);
  uint16_t h;
  std::memcpy(&h, block, 2);
  return fp16_to_fp32(h);
}

// The signed level table of the non-linear 4-bit types (IQ4_NL, MXFP4); null for the others.
static constexpr const int8_t* q32_levels(GgmlType w) {
  return w == GgmlType::IQ4_NL ? kIq4nlLevels : w == GgmlType::MXFP4 ? kMxfp4Levels : nullptr;
}

// Packed activations for F32 / F16 / BF16 weights: float rows, stride rounded up to 16 floats.
static inline int64_t f32_row_stride(int64_t k) { return round_up(k, 16); }

// Weight types multiplied with the packed Q8 activations above.
static inline bool is_quantized(GgmlType w) {
  switch (w) {
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

// Token counts from which the kernels repack weight rows into panels (fewer: the repack costs
// more than it saves), and from which float weights take AMX tiles where AMX is.
constexpr int64_t kQuantPanelMinTokens = 6;   // AVX-512, the 32-block types
constexpr int64_t kFloatPanelMinTokens = 6;   // AVX-512, F32 / F16 / BF16
constexpr int64_t kKQuantPanelMinTokens = 4;  // AVX2 and AVX-512, the super-block types
constexpr int64_t kAmxMinTokens = 8;

// Whether BF16 weights are multiplied with AVX512-BF16 dot products on BF16-rounded
// activations (matmul_avx512.cpp): the AVX-512 level, the CPU's AVX512-BF16, k even, a panel's
// worth of tokens (n_tokens: 1 for a batch-invariant product).
bool bf16_dot_products(int64_t k, int64_t n_tokens);

struct MatmulArgs {
  GgmlType type;
  const uint8_t* w;  // weight row 0
  int64_t k;
  int64_t row_bytes;
  const uint8_t* packed;
  int64_t n_tokens;
  float* y;
  int64_t y_stride;
  int64_t row_begin;
  int64_t row_end;
  bool batch_invariant = false;  // the decode kernels whatever n_tokens (TokenBatching::Invariant)
};

// The token count that chooses a product's kernel: n_tokens, or 1 for a batch-invariant one
// (whose every token then runs the one-token kernel's arithmetic).
static inline int64_t kernel_tokens(const MatmulArgs& a) { return a.batch_invariant ? 1 : a.n_tokens; }

// A per-thread, 64-byte aligned scratch buffer of at least `bytes` (reused across calls; slot
// 0..3 are independent buffers). Defined in the baseline translation unit.
void* thread_scratch(int slot, size_t bytes);

void matmul_avx2(const MatmulArgs& a);
void matmul_avx512(const MatmulArgs& a);      // the panel or the dot form, as a's tokens choose
void matmul_dot_avx512(const MatmulArgs& a);  // the dot form for any number of tokens
void matmul_amx(const MatmulArgs& a);  // falls back to matmul_avx512 where AMX does not pay

// Packs rows [t_begin, t_end) of Q8 activations (bit-identical to the scalar packer).
void pack_q8_avx512(const float* x, int64_t k, uint8_t* packed, int64_t t_begin, int64_t t_end);

}  // namespace inferscope::kernels::detail
