// Matrix products of GGUF weight matrices with float activations: y = W . x for a range of
// weight rows and a batch of tokens, on the CPU. One entry point serves decode (n_tokens = 1,
// memory-bound) and prefill (n_tokens > 1, compute-bound); the SIMD variant is chosen at run
// time (cpu_features.h).
//
// Usage: pack the activations once per product (threads may split the tokens), then let
// threads split the weight rows:
//   std::vector<std::byte> packed(packed_activation_bytes(type, k, n));
//   pack_activations(type, x, k, n, packed.data(), 0, n);
//   matmul_rows(type, w, k, packed.data(), n, y, n_rows, 0, n_rows);
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/cpu/cpu_features.h"
#include "kernels/formats/ggml_type.h"

namespace inferscope::kernels {

// F32, F16, BF16, F16_2OF4 (2:4 sparse F16, sparse24.h: float activations, AVX2 gathers), the 32-block types Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL and the 256-element
// super-block types Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, TQ1_0, TQ2_0 and the grid i-quants (IQ1_S,
// IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S); and, through rows decoded to F32
// (matmul_dequantized.h), IQ4_XS, NVFP4, Q1_0 and Q2_0.
bool matmul_supported(GgmlType w);

// Bytes of the packed activations of n_tokens rows of k values for weights of type `w`:
//   F32 / F16 / BF16 / F16_2OF4 and the types decoded to F32: float32 rows (exact copies of x).
//   Q8_0 / Q4_0 / Q4_1 / Q5_0 / Q5_1 / IQ4_NL: per row, int8 values quantized per 32-block
//     with the Q8_0 rule of GGUF-FORMATS.md 4.1 (the scale rounded to F16, as llama.cpp stores
//     it, held as float32), plus the per-block sums of the int8 values (the same bytes for all
//     six types).
//   Q2_K / Q3_K / Q4_K / Q5_K / Q6_K / TQ1_0 / TQ2_0 and the grid i-quants: per row, int8
//     values quantized per 256-block like llama.cpp's Q8_K (GGUF-FORMATS.md 3.14; float32 scale)
//     plus the sums of each 16 values (the same bytes for all of them).
// k % block_size(w) == 0. The layout depends only on (w, k, n_tokens).
size_t packed_activation_bytes(GgmlType w, int64_t k, int64_t n_tokens);

// x: [n_tokens][k] floats (row stride k). Packs rows [t_begin, t_end) into `packed` (buffer of
// packed_activation_bytes; 64-byte alignment is best). Threads may pack disjoint ranges.
void pack_activations(GgmlType w, const float* x, int64_t k, int64_t n_tokens, void* packed, int64_t t_begin,
                      int64_t t_end);

// How matmul_rows chooses its kernel for a batch of tokens.
enum class TokenBatching {
  // The fastest kernel for n_tokens: from a few tokens on, weight panels whose sums differ from
  // the one-token kernel's in the last bits (and BF16 / AMX paths that round the activations).
  Fastest,
  // Every token's outputs bit-identical to a call with that token alone, whatever n_tokens: the
  // decode kernels, taking the weights in blocks of rows that stay in cache for all the tokens.
  // For verifying drafted tokens (speculative decoding), which must reproduce plain decoding.
  Invariant,
};

// y[t * y_stride + r] = sum_i W[r][i] * x[t][i] for r in [row_begin, row_end), t in [0, n_tokens).
// weights: rows of row_bytes(w, k) bytes; k % block_size(w) == 0; packed from pack_activations
// with the same (w, k, n_tokens). Uses the active SIMD level. Threads may run disjoint row
// ranges concurrently (each uses its own scratch, kept per thread and reused).
// Any row range works; for prefill (n_tokens >= 6) ranges that start at multiples of 32 rows
// avoid partial 32-row panels at the boundaries between threads. From 8 tokens on, float
// weights use AMX where available (bf16 hi/lo split, relative error ~1e-5); without AMX, from 6
// tokens on, BF16 weights use AVX512-BF16 dot products where the CPU has them, with the
// activations rounded to BF16 (relative error per product <= 2^-9, as llama.cpp's BF16 path);
// quantized weights use int8 dot products on the packed activations in every variant.
void matmul_rows(GgmlType w, const void* weights, int64_t k, const void* packed, int64_t n_tokens, float* y,
                 int64_t y_stride, int64_t row_begin, int64_t row_end,
                 TokenBatching batching = TokenBatching::Fastest);

// Which kernel matmul_rows runs for this weight type, row length and token count at the active
// SIMD level, as bench reports it: "AVX-512 VNNI int8 panels, Q8_0 activations",
// "AVX-512 BF16 dot products (vdpbf16ps), BF16 activations", "AMX bf16 tiles"...
std::string matmul_kernel_name(GgmlType w, int64_t k, int64_t n_tokens);

// Scalar reference of the same product on the same packed activations (integer block dots for
// the quantized types, double accumulation), for tests.
void matmul_rows_reference(GgmlType w, const void* weights, int64_t k, const void* packed, int64_t n_tokens, float* y,
                           int64_t y_stride, int64_t row_begin, int64_t row_end);

}  // namespace inferscope::kernels
