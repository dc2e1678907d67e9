// GGUF weight blocks on the device (GGUF-FORMATS.md 3.1-3.18, kernels/cpu/sparse24.h): one
// struct per weight type with its geometry and an exact decoder, for the kernels that turn
// weights back into floats (dequantize.cu, get_rows.cu). Every decoder evaluates the formula of
// kernels::dequantize_row in binary32 with one rounding per operation (__fmul_rn / __fadd_rn
// keep nvcc from fusing a product and a sum), so its values are the CPU's bit for bit.
// - The float types (kValues == 1) decode one value: value(p), p its first byte.
// - The block types decode 8 consecutive values: decode8(block, g, v) gives values 8g..8g+7
//   of the block (g < kValues / 8).
// kAlign: the alignment of every block when a row starts at a multiple of it (the largest power
// of two, at most 16, dividing kBytes): the matvec reads words that wide (block_dots.cuh).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/iq_grids.cuh"
#include "kernels/formats/ggml_type.h"

namespace inferscope::cuda_kernels {

// ---- Loads ----------------------------------------------------------------------------------

// A little-endian u16 at a 2-byte aligned address.
__device__ __forceinline__ uint32_t load_u16(const uint8_t* p) { return *reinterpret_cast<const uint16_t*>(p); }

// A little-endian u32 at a 4-byte aligned address.
__device__ __forceinline__ uint32_t load_u32(const uint8_t* p) { return *reinterpret_cast<const uint32_t*>(p); }

__device__ __forceinline__ float load_f16(const uint8_t* p) {
  return __half2float(__ushort_as_half(static_cast<unsigned short>(load_u16(p))));
}

__device__ __forceinline__ float bf16_bits_to_float(uint32_t bits) { return __uint_as_float(bits << 16); }

// K little-endian u32 words from a 2-byte aligned address: K + 1 aligned loads (the last only
// when p is not 4-aligned, so nothing past the words' last aligned word is read), joined by
// shifts.
template <int K>
__device__ __forceinline__ void load_words_a2(const uint8_t* p, uint32_t (&w)[K]) {
  const unsigned misalignment = static_cast<unsigned>(reinterpret_cast<uintptr_t>(p) & 2u);  // 0 or 2
  const uint32_t* aligned = reinterpret_cast<const uint32_t*>(p - misalignment);             // p's address space kept
  const unsigned shift = misalignment * 8u;
  uint32_t a[K + 1];
#pragma unroll
  for (int i = 0; i < K; ++i) a[i] = aligned[i];
  a[K] = shift != 0u ? aligned[K] : 0u;
#pragma unroll
  for (int i = 0; i < K; ++i) {
    w[i] = static_cast<uint32_t>(((static_cast<uint64_t>(a[i + 1]) << 32) | a[i]) >> shift);
  }
}

__device__ __forceinline__ uint32_t load_word_a2(const uint8_t* p) {
  uint32_t w[1];
  load_words_a2(p, w);
  return w[0];
}

// Byte i (0..3) of w.
__device__ __forceinline__ uint32_t byte_of(uint32_t w, int i) { return (w >> (8 * i)) & 0xFFu; }

// Byte i (0..11, known only at run time) of the 12 bytes held in w[0..2], without indexing a
// register array at run time.
__device__ __forceinline__ uint32_t byte_of12(const uint32_t (&w)[3], int i) {
  const uint32_t word = i < 4 ? w[0] : (i < 8 ? w[1] : w[2]);
  return byte_of(word, i & 3);
}

// ---- Shared decoding rules ------------------------------------------------------------------

// Entry q (0..15) of a 16-entry table of signed bytes held in four words (entries 4i..4i+3 in
// t_i, low byte first), in the low 8 bits: selected without memory.
__device__ __forceinline__ uint32_t table16_byte(uint32_t q, uint32_t t0, uint32_t t1, uint32_t t2, uint32_t t3) {
  const uint32_t word = (q & 8u) ? ((q & 4u) ? t3 : t2) : ((q & 4u) ? t1 : t0);
  return byte_of(word, static_cast<int>(q & 3u));
}

// A little-endian u32 at any address (four byte loads).
__device__ __forceinline__ uint32_t load_u32_a1(const uint8_t* p) {
  return p[0] | (static_cast<uint32_t>(p[1]) << 8) | (static_cast<uint32_t>(p[2]) << 16) |
         (static_cast<uint32_t>(p[3]) << 24);
}

// E8M0 scale byte x of an MXFP4 block as its factor 2^(x - 128) (kernels/formats/e8m0.h).
__device__ __forceinline__ float e8m0_to_fp32_half(uint32_t x) {
  return __uint_as_float(x < 2u ? 0x00200000u << x : (x - 1u) << 23);
}

// Digit n (0..4, 0 the most significant) of a TQ1_0 byte v: ((v * 3^n) mod 256 * 3) >> 8.
__device__ __forceinline__ uint32_t tq1_digit(uint32_t v, int n) {
  const uint32_t pow3 = n == 0 ? 1u : (n == 1 ? 3u : (n == 2 ? 9u : (n == 3 ? 27u : 81u)));
  return (((v * pow3) & 0xFFu) * 3u) >> 8;
}

// Q4_K / Q5_K: scale and min of 32-value sub-block s (0..7) from the 12 packed bytes (3.11).
__device__ __forceinline__ void scale_min_k4(const uint32_t (&scales)[3], int s, int& sc, int& mn) {
  if (s < 4) {
    sc = static_cast<int>(byte_of12(scales, s) & 63u);
    mn = static_cast<int>(byte_of12(scales, s + 4) & 63u);
  } else {
    sc = static_cast<int>((byte_of12(scales, s + 4) & 15u) | ((byte_of12(scales, s - 4) >> 6) << 4));
    mn = static_cast<int>((byte_of12(scales, s + 4) >> 4) | ((byte_of12(scales, s) >> 6) << 4));
  }
}

// Q3_K: the signed scale S - 32 of 16-value sub-block s (0..15) from the 12 packed bytes (3.10).
__device__ __forceinline__ int q3k_scale(const uint32_t (&scales)[3], int s) {
  const uint32_t low4 = s < 8 ? (byte_of12(scales, s) & 15u) : (byte_of12(scales, s - 8) >> 4);
  const uint32_t high2 = (byte_of12(scales, 8 + s % 4) >> (2 * (s / 4))) & 3u;
  return static_cast<int>(low4 | (high2 << 4)) - 32;
}

// ---- Float types ----------------------------------------------------------------------------

struct BlockF32 {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::F32;
  static constexpr int kValues = 1, kBytes = 4, kAlign = 4;
  __device__ static float value(const uint8_t* p) { return *reinterpret_cast<const float*>(p); }
};

struct BlockF16 {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::F16;
  static constexpr int kValues = 1, kBytes = 2, kAlign = 2;
  __device__ static float value(const uint8_t* p) { return load_f16(p); }
};

struct BlockBF16 {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::BF16;
  static constexpr int kValues = 1, kBytes = 2, kAlign = 2;
  __device__ static float value(const uint8_t* p) { return bf16_bits_to_float(load_u16(p)); }
};

// ---- 32-value blocks ------------------------------------------------------------------------

// 2:4 sparse F16 (sparse24.h): {f16 values[16]; u8 pos[4]}; group k (4 values) keeps values
// 2k, 2k + 1 at the positions in nibble k % 2 of pos[k / 2].
struct BlockF16x2of4 {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::F16_2OF4;
  static constexpr int kValues = 32, kBytes = 36, kAlign = 4;
  __device__ static void decode8(const uint8_t* block, int g, float (&v)[8]) {
    const uint32_t nibbles = block[32 + g];  // groups 2g and 2g + 1
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      const uint32_t nib = (nibbles >> (4 * k)) & 15u;
      const float first = load_f16(block + 8 * g + 4 * k), second = load_f16(block + 8 * g + 4 * k + 2);
#pragma unroll
      for (uint32_t p = 0; p < 4; ++p) v[4 * k + p] = p == (nib >> 2) ? second : (p == (nib & 3u) ? first : 0.0f);
    }
  }
};

// The 4-bit code of value e (0..31) of a 32-value nibble block: qs[e % 16], low nibble first.
__device__ __forceinline__ uint32_t nibble32(const uint8_t* qs, int e) { return (qs[e % 16] >> (4 * (e / 16))) & 15u; }

struct BlockQ4_0 {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::Q4_0;
  static constexpr int kValues = 32, kBytes = 18, kAlign = 2;
  __device__ static void decode8(const uint8_t* block, int g, float (&v)[8]) {
    const float d = load_f16(block);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int q = static_cast<int>(nibble32(block + 2, 8 * g + i)) - 8;
      v[i] = __fmul_rn(static_cast<float>(q), d);
    }
  }
};

struct BlockQ4_1 {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::Q4_1;
  static constexpr int kValues = 32, kBytes = 20, kAlign = 4;
  __device__ static void decode8(const uint8_t* block, int g, float (&v)[8]) {
    const float d = load_f16(block), m = load_f16(block + 2);
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = __fadd_rn(__fmul_rn(static_cast<float>(nibble32(block + 4, 8 * g + i)), d), m);
  }
};

struct BlockQ5_0 {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::Q5_0;
  static constexpr int kValues = 32, kBytes = 22, kAlign = 2;
  __device__ static void decode8(const uint8_t* block, int g, float (&v)[8]) {
    const float d = load_f16(block);
    const uint32_t qh = load_word_a2(block + 2);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int e = 8 * g + i;
      const int q = static_cast<int>(nibble32(block + 6, e) | (((qh >> e) & 1u) << 4));
      v[i] = __fmul_rn(static_cast<float>(q - 16), d);
    }
  }
};

struct BlockQ5_1 {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::Q5_1;
  static constexpr int kValues = 32, kBytes = 24, kAlign = 8;
  __device__ static void decode8(const uint8_t* block, int g, float (&v)[8]) {
    const float d = load_f16(block), m = load_f16(block + 2);
    const uint32_t qh = load_u32(block + 4);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int e = 8 * g + i;
      const uint32_t q = nibble32(block + 8, e) | (((qh >> e) & 1u) << 4);
      v[i] = __fadd_rn(__fmul_rn(static_cast<float>(q), d), m);
    }
  }
};

struct BlockQ8_0 {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::Q8_0;
  static constexpr int kValues = 32, kBytes = 34, kAlign = 2;
  __device__ static void decode8(const uint8_t* block, int g, float (&v)[8]) {
    const float d = load_f16(block);
    const int8_t* qs = reinterpret_cast<const int8_t*>(block + 2 + 8 * g);
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = __fmul_rn(static_cast<float>(qs[i]), d);
  }
};

// The non-linear 4-bit types: Q4_0's nibble layout after a scale, each nibble indexing a table
// of 16 signed levels; x = d * level[q]. Each gives kQs (its codes' offset), scale(block) and
// level_byte(q).
template <class Table>
struct BlockNibbleTable : Table {
  static constexpr int kValues = 32;
  __device__ static void decode8(const uint8_t* block, int g, float (&v)[8]) {
    const float d = Table::scale(block);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int8_t level = static_cast<int8_t>(Table::level_byte(nibble32(block + Table::kQs, 8 * g + i)));
      v[i] = __fmul_rn(d, static_cast<float>(level));
    }
  }
};

// IQ4_NL (GGUF-FORMATS.md 3.15): {f16 d; u8 qs[16]}.
struct TableIQ4_NL {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::IQ4_NL;
  static constexpr int kBytes = 18, kAlign = 2, kQs = 2;
  __device__ static float scale(const uint8_t* block) { return load_f16(block); }
  __device__ static uint32_t level_byte(uint32_t q) {
    return table16_byte(q, 0xBFAD9881u, 0xF6EADDCFu, 0x26190D01u, 0x71594535u);
  }
};
using BlockIQ4_NL = BlockNibbleTable<TableIQ4_NL>;

// MXFP4 (type 39): {u8 e (E8M0); u8 qs[16]}, the levels twice the E2M1 values.
struct TableMXFP4 {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::MXFP4;
  static constexpr int kBytes = 17, kAlign = 1, kQs = 1;
  __device__ static float scale(const uint8_t* block) { return e8m0_to_fp32_half(block[0]); }
  __device__ static uint32_t level_byte(uint32_t q) {
    return table16_byte(q, 0x03020100u, 0x0C080604u, 0xFDFEFF00u, 0xF4F8FAFCu);
  }
};
using BlockMXFP4 = BlockNibbleTable<TableMXFP4>;

// ---- 256-value super-blocks -----------------------------------------------------------------

// IQ4_XS: {f16 d; u16 scales_h; u8 scales_l[4]; u8 qs[128]}. Group g (32 values) has the 6-bit
// scale ls (nibble g of scales_l, bits 2g, 2g + 1 of scales_h above it) and IQ4_NL's layout in
// qs[16 g..]; x = (d * (ls - 32)) * level[q].
struct BlockIQ4_XS {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::IQ4_XS;
  static constexpr int kValues = 256, kBytes = 136, kAlign = 8;
  __device__ static float group_scale(const uint8_t* block, int g) {
    const uint32_t head = load_u32(block), low = load_u32(block + 4);
    const uint32_t ls = ((low >> (4 * g)) & 15u) | (((head >> (16 + 2 * g)) & 3u) << 4);
    return __fmul_rn(load_f16(block), static_cast<float>(static_cast<int>(ls) - 32));
  }
  __device__ static void decode8(const uint8_t* block, int g, float (&v)[8]) {
    const int group = g / 4;
    const float d = group_scale(block, group);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const uint32_t q = nibble32(block + 8 + 16 * group, 8 * (g % 4) + i);
      v[i] = __fmul_rn(d, static_cast<float>(static_cast<int8_t>(TableIQ4_NL::level_byte(q))));
    }
  }
};

// ---- The grid i-quants ----------------------------------------------------------------------
// IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S (kernels/cpu/iquant_blocks.h, whose form
// this is): each Grid gives point(block, s, q) for the 8 values 8s..8s+7 (s < 32: point s % 4 of
// 32-value group s / 4) as signed bytes q[0..1] (grid coordinates with their signs; IQ1's
// 8c +- 1) and returns the scale of their 16-value half: unit * small scale, one rounding, so
// that x = scale * q is the CPU's value bit for bit.

// Point i of the 8-coordinate grid at word offset `grid` of kIqGridWords, and of the 4-coordinate
// one.
__device__ __forceinline__ void grid_point8(uint32_t grid, uint32_t i, uint32_t (&q)[2]) {
  q[0] = kIqGridWords[grid + 2 * i];
  q[1] = kIqGridWords[grid + 2 * i + 1];
}
__device__ __forceinline__ uint32_t grid_point4(uint32_t grid, uint32_t i) { return kIqGridWords[grid + i]; }

// The 8 sign bits of an IQ2/IQ3 point from a 7-bit index (bit 7 evens the count of negatives).
__device__ __forceinline__ uint32_t iq_sign_bits(uint32_t index7) {
  const uint32_t i = index7 & 127u;
  return i | ((static_cast<uint32_t>(__popc(i)) & 1u) << 7);
}

// The four bytes of `point` with byte j negated where bit j of `signs` is set (grid coordinates
// are never 0, so 256 - b borrows from no neighbour).
__device__ __forceinline__ uint32_t iq_signed(uint32_t point, uint32_t signs) {
  const uint32_t m = (((signs & 15u) * 0x00204081u) & 0x01010101u) * 0xFFu;
  return (point ^ m) + (m & 0x01010101u);
}

// An 8-coordinate point with its sign bits.
__device__ __forceinline__ void signed_point8(uint32_t grid, uint32_t i, uint32_t signs, uint32_t (&q)[2]) {
  grid_point8(grid, i, q);
  q[0] = iq_signed(q[0], signs);
  q[1] = iq_signed(q[1], signs >> 4);
}

// IQ1: point i of the grid (stored as c + 1) as the bytes 8c - 1 (negative delta) or 8c + 1,
// through offset binary (8(c + 1) + 128 - bias stays within a byte).
__device__ __forceinline__ void iq1_point(uint32_t i, bool negative_delta, uint32_t (&q)[2]) {
  grid_point8(IQ_GRID_IQ1S, i, q);
  const uint32_t bias = (negative_delta ? 9u : 7u) * 0x01010101u;
  q[0] = (q[0] * 8u + 0x80808080u - bias) ^ 0x80808080u;
  q[1] = (q[1] * 8u + 0x80808080u - bias) ^ 0x80808080u;
}

__device__ __forceinline__ float iq_scale(float unit, uint32_t s) { return __fmul_rn(unit, static_cast<float>(2 * s + 1)); }

template <class Grid>
struct BlockGrid : Grid {
  static constexpr int kValues = 256;
  __device__ static void decode8(const uint8_t* block, int g, float (&v)[8]) {
    uint32_t q[2];
    const float d = Grid::point(block, g, q);
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = __fmul_rn(d, static_cast<float>(static_cast<int8_t>(byte_of(q[i / 4], i % 4))));
  }
};

// {f16 d; u16 qs[32]}: group g = 4 index bytes, then a word (signs 7 bits per point, scale on top).
struct GridIQ2_XXS {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::IQ2_XXS;
  static constexpr int kBytes = 66, kAlign = 2;
  __device__ static float point(const uint8_t* block, int s, uint32_t (&q)[2]) {
    const uint8_t* group = block + 2 + 8 * (s / 4);
    const uint32_t w = load_word_a2(group + 4);
    signed_point8(IQ_GRID_IQ2XXS, group[s % 4], iq_sign_bits(w >> (7 * (s % 4))), q);
    return iq_scale(__fmul_rn(load_f16(block), 0.125f), w >> 28);
  }
};

// {f16 d; u16 qs[32]; u8 scales[8]}: qs = 9-bit index | 7-bit sign index << 9.
struct GridIQ2_XS {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::IQ2_XS;
  static constexpr int kBytes = 74, kAlign = 2;
  __device__ static float point(const uint8_t* block, int s, uint32_t (&q)[2]) {
    const uint32_t qs = load_u16(block + 2 + 2 * s);
    signed_point8(IQ_GRID_IQ2XS, qs & 511u, iq_sign_bits(qs >> 9), q);
    return iq_scale(__fmul_rn(load_f16(block), 0.125f), (block[66 + s / 4] >> (4 * ((s % 4) / 2))) & 15u);
  }
};

// {f16 d; u8 qs[32]; u8 signs[32]; u8 qh[8]; u8 scales[8]}
struct GridIQ2_S {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::IQ2_S;
  static constexpr int kBytes = 82, kAlign = 2;
  __device__ static float point(const uint8_t* block, int s, uint32_t (&q)[2]) {
    const int g = s / 4, l = s % 4;
    const uint32_t index = block[2 + s] | (((static_cast<uint32_t>(block[66 + g]) >> (2 * l)) & 3u) << 8);
    signed_point8(IQ_GRID_IQ2S, index, block[34 + s], q);
    return iq_scale(__fmul_rn(load_f16(block), 0.125f), (block[74 + g] >> (4 * (l / 2))) & 15u);
  }
};

// {f16 d; u8 qs[64]; u32 scales_signs[8]}: two 4-coordinate points per 8 values.
struct GridIQ3_XXS {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::IQ3_XXS;
  static constexpr int kBytes = 98, kAlign = 2;
  __device__ static float point(const uint8_t* block, int s, uint32_t (&q)[2]) {
    const int g = s / 4, l = s % 4;
    const uint32_t w = load_word_a2(block + 66 + 4 * g), signs = iq_sign_bits(w >> (7 * l));
    q[0] = iq_signed(grid_point4(IQ_GRID_IQ3XXS, block[2 + 2 * s]), signs);
    q[1] = iq_signed(grid_point4(IQ_GRID_IQ3XXS, block[3 + 2 * s]), signs >> 4);
    return iq_scale(__fmul_rn(load_f16(block), 0.25f), w >> 28);
  }
};

// {f16 d; u8 qs[64]; u8 qh[8]; u8 signs[32]; u8 scales[4]}: 9-bit indices of 4-coordinate points.
struct GridIQ3_S {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::IQ3_S;
  static constexpr int kBytes = 110, kAlign = 2;
  __device__ static float point(const uint8_t* block, int s, uint32_t (&q)[2]) {
    const int g = s / 4, l = s % 4;
    const uint32_t qh = block[66 + g], signs = block[74 + s];
    q[0] = iq_signed(grid_point4(IQ_GRID_IQ3S, block[2 + 2 * s] | (((qh >> (2 * l)) & 1u) << 8)), signs);
    q[1] = iq_signed(grid_point4(IQ_GRID_IQ3S, block[3 + 2 * s] | (((qh >> (2 * l + 1)) & 1u) << 8)), signs >> 4);
    return iq_scale(load_f16(block), (block[106 + g / 2] >> (4 * (g % 2))) & 15u);
  }
};

// {f16 d; u8 qs[32]; u16 qh[8]}: qh holds 3 index bits per point, the scale and the delta's sign.
struct GridIQ1_S {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::IQ1_S;
  static constexpr int kBytes = 50, kAlign = 2;
  __device__ static float point(const uint8_t* block, int s, uint32_t (&q)[2]) {
    const int g = s / 4, l = s % 4;
    const uint32_t qh = load_u16(block + 34 + 2 * g);
    iq1_point(block[2 + s] | (((qh >> (3 * l)) & 7u) << 8), (qh & 0x8000u) != 0u, q);
    return iq_scale(__fmul_rn(load_f16(block), 0.125f), (qh >> 12) & 7u);
  }
};

// {u8 qs[32]; u8 qh[16]; u16 scales[4]}: the F16 unit in the top nibbles of the scale words; per
// point 3 index bits and the delta's sign in a nibble of qh.
struct GridIQ1_M {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::IQ1_M;
  static constexpr int kBytes = 56, kAlign = 8;
  __device__ static float point(const uint8_t* block, int s, uint32_t (&q)[2]) {
    const int g = s / 4, l = s % 4;
    const uint32_t h = static_cast<uint32_t>(block[32 + 2 * g + l / 2]) >> (4 * (l % 2));
    iq1_point(block[s] | ((h & 7u) << 8), (h & 8u) != 0u, q);
    const uint32_t sc01 = load_u32(block + 48), sc23 = load_u32(block + 52);
    const uint32_t bits = ((sc01 >> 12) & 0xFu) | ((sc01 >> 24) & 0xF0u) | ((sc23 >> 4) & 0xF00u) | ((sc23 >> 16) & 0xF000u);
    const float unit = __fmul_rn(__half2float(__ushort_as_half(static_cast<unsigned short>(bits))), 0.125f);
    const uint32_t word = (g < 4 ? sc01 : sc23) >> (16 * ((g / 2) % 2) + 6 * (g % 2));
    return iq_scale(unit, (word >> (3 * (l / 2))) & 7u);
  }
};

using BlockIQ2_XXS = BlockGrid<GridIQ2_XXS>;
using BlockIQ2_XS = BlockGrid<GridIQ2_XS>;
using BlockIQ2_S = BlockGrid<GridIQ2_S>;
using BlockIQ3_XXS = BlockGrid<GridIQ3_XXS>;
using BlockIQ3_S = BlockGrid<GridIQ3_S>;
using BlockIQ1_S = BlockGrid<GridIQ1_S>;
using BlockIQ1_M = BlockGrid<GridIQ1_M>;

// The 2-bit code of value e (0..255) in Q2_K / Q3_K / TQ2_0's layout: bits 2j of qs[32h + l]
// for e = 128h + 32j + l.
__device__ __forceinline__ uint32_t crumb256(const uint8_t* qs, int e) {
  return (qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3u;
}

// The low 4 bits of value e in Q4_K / Q5_K's layout: 64-value chunks of 32 bytes, low nibbles
// first.
__device__ __forceinline__ uint32_t nibble256(const uint8_t* qs, int e) {
  return (qs[32 * (e / 64) + e % 32] >> (4 * ((e % 64) / 32))) & 15u;
}

// {u8 scales[16]; u8 qs[64]; f16 d; f16 dmin}
struct BlockQ2_K {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::Q2_K;
  static constexpr int kValues = 256, kBytes = 84, kAlign = 4;
  __device__ static void decode8(const uint8_t* block, int g, float (&v)[8]) {
    const uint32_t sc = block[g / 2];  // the 16-value sub-block of values 8g..
    const float dl = __fmul_rn(load_f16(block + 80), static_cast<float>(sc & 15u));
    const float ml = __fmul_rn(load_f16(block + 82), static_cast<float>(sc >> 4));
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      v[i] = __fadd_rn(__fmul_rn(dl, static_cast<float>(crumb256(block + 16, 8 * g + i))), -ml);
    }
  }
};

// {u8 hmask[32]; u8 qs[64]; u8 scales[12]; f16 d}
struct BlockQ3_K {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::Q3_K;
  static constexpr int kValues = 256, kBytes = 110, kAlign = 2;
  __device__ static void decode8(const uint8_t* block, int g, float (&v)[8]) {
    uint32_t scales[3];
    load_words_a2(block + 96, scales);
    const float dl = __fmul_rn(load_f16(block + 108), static_cast<float>(q3k_scale(scales, g / 2)));
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int e = 8 * g + i;
      const uint32_t high = (block[e % 32] >> (e / 32)) & 1u;
      const int q = static_cast<int>(crumb256(block + 32, e)) - (high != 0u ? 0 : 4);
      v[i] = __fmul_rn(dl, static_cast<float>(q));
    }
  }
};

// Q4_K / Q5_K: d1 * q - m1 for the scale and min of the 32-value sub-block of values 8g...
__device__ __forceinline__ void scale_min_products(const uint8_t* block, int g, float& d1, float& m1) {
  uint32_t scales[3];
  load_words_a2(block + 4, scales);
  int sc, mn;
  scale_min_k4(scales, g / 4, sc, mn);
  d1 = __fmul_rn(load_f16(block), static_cast<float>(sc));
  m1 = __fmul_rn(load_f16(block + 2), static_cast<float>(mn));
}

// {f16 d; f16 dmin; u8 scales[12]; u8 qs[128]}
struct BlockQ4_K {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::Q4_K;
  static constexpr int kValues = 256, kBytes = 144, kAlign = 16;
  __device__ static void decode8(const uint8_t* block, int g, float (&v)[8]) {
    float d1, m1;
    scale_min_products(block, g, d1, m1);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      v[i] = __fadd_rn(__fmul_rn(d1, static_cast<float>(nibble256(block + 16, 8 * g + i))), -m1);
    }
  }
};

// {f16 d; f16 dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]}
struct BlockQ5_K {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::Q5_K;
  static constexpr int kValues = 256, kBytes = 176, kAlign = 16;
  __device__ static void decode8(const uint8_t* block, int g, float (&v)[8]) {
    float d1, m1;
    scale_min_products(block, g, d1, m1);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int e = 8 * g + i;
      const uint32_t q = nibble256(block + 48, e) + 16u * ((block[16 + e % 32] >> (e / 32)) & 1u);
      v[i] = __fadd_rn(__fmul_rn(d1, static_cast<float>(q)), -m1);
    }
  }
};

// {u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d}
struct BlockQ6_K {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::Q6_K;
  static constexpr int kValues = 256, kBytes = 210, kAlign = 2;
  __device__ static void decode8(const uint8_t* block, int g, float (&v)[8]) {
    const int8_t scale = static_cast<int8_t>(block[192 + g / 2]);
    const float ds = __fmul_rn(load_f16(block + 208), static_cast<float>(scale));
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int e = 8 * g + i, h = e / 128, part = (e % 128) / 32, l = e % 32;
      const uint32_t low4 = (block[64 * h + 32 * (part % 2) + l] >> (4 * (part / 2))) & 15u;
      const uint32_t high2 = (block[128 + 32 * h + l] >> (2 * part)) & 3u;
      v[i] = __fmul_rn(ds, static_cast<float>(static_cast<int>(low4 | (high2 << 4)) - 32));
    }
  }
};

// {u8 qs[48]; u8 qh[4]; f16 d}: base-3 digits, five per qs byte, four per qh byte.
struct BlockTQ1_0 {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::TQ1_0;
  static constexpr int kValues = 256, kBytes = 54, kAlign = 2;
  // The byte holding value e and the digit of it that e is.
  __device__ static void locate(int e, int& byte, int& digit) {
    if (e < 160) {
      byte = e % 32, digit = e / 32;
    } else if (e < 240) {
      byte = 32 + (e - 160) % 16, digit = (e - 160) / 16;
    } else {
      byte = 48 + (e - 240) % 4, digit = (e - 240) / 4;
    }
  }
  __device__ static void decode8(const uint8_t* block, int g, float (&v)[8]) {
    const float d = load_f16(block + 52);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      int byte, digit;
      locate(8 * g + i, byte, digit);
      v[i] = __fmul_rn(static_cast<float>(static_cast<int>(tq1_digit(block[byte], digit)) - 1), d);
    }
  }
};

// {u8 qs[64]; f16 d}
struct BlockTQ2_0 {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::TQ2_0;
  static constexpr int kValues = 256, kBytes = 66, kAlign = 2;
  __device__ static void decode8(const uint8_t* block, int g, float (&v)[8]) {
    const float d = load_f16(block + 64);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int q = static_cast<int>(crumb256(block, 8 * g + i)) - 1;
      v[i] = __fmul_rn(static_cast<float>(q), d);
    }
  }
};

// ---- Rows -----------------------------------------------------------------------------------

// Values per thread of the decoding kernels: one of a float type, 8 of a block type.
template <class Block>
__host__ __device__ constexpr int decode_unit() {
  return Block::kValues == 1 ? 1 : 8;
}

// Values [u * decode_unit, (u + 1) * decode_unit) of the row starting at `row`.
template <class Block>
__device__ __forceinline__ void decode_unit_of_row(const uint8_t* row, int64_t u, float (&v)[decode_unit<Block>()]) {
  if constexpr (Block::kValues == 1) {
    v[0] = Block::value(row + u * Block::kBytes);
  } else {
    constexpr int kGroups = Block::kValues / 8;
    Block::decode8(row + u / kGroups * Block::kBytes, static_cast<int>(u % kGroups), v);
  }
}

// ---- Dispatch -------------------------------------------------------------------------------

// Calls f(Block{}) with the block struct of `type` and returns its result, or
// cudaErrorInvalidValue for a type without one.
template <class F>
cudaError_t with_weight_block(kernels::GgmlType type, F&& f) {
  using kernels::GgmlType;
  switch (type) {
    case GgmlType::F32:
      return f(BlockF32{});
    case GgmlType::F16:
      return f(BlockF16{});
    case GgmlType::BF16:
      return f(BlockBF16{});
    case GgmlType::F16_2OF4:
      return f(BlockF16x2of4{});
    case GgmlType::Q4_0:
      return f(BlockQ4_0{});
    case GgmlType::Q4_1:
      return f(BlockQ4_1{});
    case GgmlType::Q5_0:
      return f(BlockQ5_0{});
    case GgmlType::Q5_1:
      return f(BlockQ5_1{});
    case GgmlType::Q8_0:
      return f(BlockQ8_0{});
    case GgmlType::IQ4_NL:
      return f(BlockIQ4_NL{});
    case GgmlType::MXFP4:
      return f(BlockMXFP4{});
    case GgmlType::IQ4_XS:
      return f(BlockIQ4_XS{});
    case GgmlType::IQ1_S:
      return f(BlockIQ1_S{});
    case GgmlType::IQ1_M:
      return f(BlockIQ1_M{});
    case GgmlType::IQ2_XXS:
      return f(BlockIQ2_XXS{});
    case GgmlType::IQ2_XS:
      return f(BlockIQ2_XS{});
    case GgmlType::IQ2_S:
      return f(BlockIQ2_S{});
    case GgmlType::IQ3_XXS:
      return f(BlockIQ3_XXS{});
    case GgmlType::IQ3_S:
      return f(BlockIQ3_S{});
    case GgmlType::Q2_K:
      return f(BlockQ2_K{});
    case GgmlType::Q3_K:
      return f(BlockQ3_K{});
    case GgmlType::Q4_K:
      return f(BlockQ4_K{});
    case GgmlType::Q5_K:
      return f(BlockQ5_K{});
    case GgmlType::Q6_K:
      return f(BlockQ6_K{});
    case GgmlType::TQ1_0:
      return f(BlockTQ1_0{});
    case GgmlType::TQ2_0:
      return f(BlockTQ2_0{});
    default:
      return cudaErrorInvalidValue;
  }
}

// Whether `w`'s rows can be read as Block's: cols whole blocks of kAlign-aligned rows.
template <class Block>
bool rows_fit_block(const uint8_t* data, int64_t cols, int64_t row_bytes, int64_t matrix_bytes) {
  return cols % Block::kValues == 0 && row_bytes >= cols / Block::kValues * Block::kBytes &&
         reinterpret_cast<uintptr_t>(data) % Block::kAlign == 0 && row_bytes % Block::kAlign == 0 &&
         matrix_bytes % Block::kAlign == 0;
}

}  // namespace inferscope::cuda_kernels
