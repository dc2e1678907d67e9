// Internal to the matmul kernels: the packed-activation layout shared by every SIMD variant and
// the entry points of the variants. Included by files built with AVX2/AVX-512 flags, so it
// only has internal-linkage helpers (no shared inline code the linker could mix up).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/ggml_type.h"

namespace inferscope::kernels::detail {

constexpr int64_t kQBlock = 32;  // elements per Q8_0 / Q4_0 block

static inline int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// Packed activations for Q8_0 / Q4_0 weights, one row per token, each row 64-byte aligned
// relative to the buffer start:
//   int8_t  qs[round_up(k, 64)]  values quantized per 32-block (Q8_0 rule, float32 scale)
//   float   d[k / 32]            block scales
//   int32_t corr[k / 32]         -offset * sum(qs of the block), offset = 8 for Q4_0 weights
//                                (nibbles are q + 8) and 128 for Q8_0 weights (the kernels
//                                may use w + 128 as the unsigned operand of u8 x s8 products)
struct Q8Layout {
  int64_t n_blocks;
  int64_t d_offset;
  int64_t corr_offset;
  int64_t row_stride;
};

static inline Q8Layout q8_layout(int64_t k) {
  Q8Layout l;
  l.n_blocks = k / kQBlock;
  l.d_offset = round_up(k, 64);
  l.corr_offset = l.d_offset + 4 * l.n_blocks;
  l.row_stride = round_up(l.corr_offset + 4 * l.n_blocks, 64);
  return l;
}

static inline int32_t q8_corr_offset(GgmlType w) { return w == GgmlType::Q4_0 ? 8 : 128; }

// Packed activations for F32 / F16 / BF16 weights: float rows, stride rounded up to 16 floats.
static inline int64_t f32_row_stride(int64_t k) { return round_up(k, 16); }

static inline bool is_quantized(GgmlType w) { return w == GgmlType::Q8_0 || w == GgmlType::Q4_0; }

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
};

// A per-thread, 64-byte aligned scratch buffer of at least `bytes` (reused across calls; slot
// 0..3 are independent buffers). Defined in the baseline translation unit.
void* thread_scratch(int slot, size_t bytes);

void matmul_avx2(const MatmulArgs& a);
void matmul_avx512(const MatmulArgs& a);
void matmul_amx(const MatmulArgs& a);  // falls back to matmul_avx512 where AMX does not pay

// Packs rows [t_begin, t_end) of Q8 activations (bit-identical to the scalar packer).
void pack_q8_avx512(GgmlType w, const float* x, int64_t k, uint8_t* packed, int64_t t_begin, int64_t t_end);

}  // namespace inferscope::kernels::detail
