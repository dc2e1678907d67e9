// The decode GEMV's view of each weight type (matvec.cu): how kLanes threads split one block,
// and the dot product of each thread's slice of it with one token's activations.
//
// Every Dot type extends its Block (weight_blocks.cuh) with:
//   kLanes            threads per block; thread s < kLanes takes slice s
//   kTakesQ8          whether it reads the int8 activations (q8_activations.cuh) or the F32 ones
//   W load_w(block, s)         the slice's weights, unpacked once and used for every token
//   X load_x(token, b, s)      the slice's activations of block b of one token's row
//   dot(w, x, s, acc)          acc += the slice's part of W[r] . x, in F32
// Slices are chosen so that the kLanes threads of a block read neighbouring words of it, each
// with the widest load the block's alignment allows.
//
// The quantized types multiply integer weight codes with the int8 codes of x by __dp4a, four
// products per instruction, over groups that share one weight scale and one x scale; a code
// with an offset (Q4_0's q - 8...) is turned into a signed byte first (minus_bias), and a
// weight minimum m multiplies the sum of the codes of x it meets: from the stored block sum
// (taken by the block's slice 0) when the minimum covers a whole 32-value x block, from __dp4a
// with ones when it covers less (Q2_K).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/q8_activations.cuh"
#include "kernels/cuda/weight_blocks.cuh"

namespace inferscope::cuda_kernels {

// One token's activations: its F32 row and its int8 row (whichever the Dot reads).
struct TokenActivations {
  const float* x;
  Q8Row q8;
};

// ---- Integer helpers ------------------------------------------------------------------------

__device__ __forceinline__ int dot4(uint32_t a, int b, int c) { return __dp4a(static_cast<int>(a), b, c); }

// The four bytes u_i - bias as signed bytes, for bytes u_i < bias + 128 (bias <= 128): the
// offset-binary byte u_i + 128 - bias read as two's complement, without carries between bytes.
__device__ __forceinline__ uint32_t minus_bias(uint32_t u, uint32_t bias) {
  return (u + (128u - bias) * 0x01010101u) ^ 0x80808080u;
}

__device__ __forceinline__ uint32_t low_nibbles(uint32_t w) { return w & 0x0F0F0F0Fu; }
__device__ __forceinline__ uint32_t high_nibbles(uint32_t w) { return (w >> 4) & 0x0F0F0F0Fu; }

// Bit i of the 4-bit b at bit 8i: one bit per byte.
__device__ __forceinline__ uint32_t spread_bits4(uint32_t b) {
  return (b & 1u) | ((b & 2u) << 7) | ((b & 4u) << 14) | ((b & 8u) << 21);
}

// Bit `bit` of each byte of w, at bit 0 of the byte.
__device__ __forceinline__ uint32_t bit_of_bytes(uint32_t w, int bit) { return (w >> bit) & 0x01010101u; }

__device__ __forceinline__ float half_lo(uint32_t w) {
  return __half2float(__ushort_as_half(static_cast<unsigned short>(w & 0xFFFFu)));
}
__device__ __forceinline__ float half_hi(uint32_t w) { return half_lo(w >> 16); }

constexpr int kOnes = 0x01010101;  // dot4 with it sums four signed bytes

// ---- 32-value blocks: 4 threads, thread s takes qs word s (values 4s.., and 16 + 4s.. of the
// nibble types) ------------------------------------------------------------------------------

// A slice's x in the nibble layout: codes 4s.. and 16 + 4s.., the block's scale and sum.
struct NibbleX {
  int lo, hi;
  float d;
  int sum;
  __device__ static NibbleX load(const TokenActivations& t, int64_t b, int s) {
    const int2 meta = t.q8.meta[b];
    return {t.q8.quad(8 * b + s), t.q8.quad(8 * b + 4 + s), __int_as_float(meta.x), meta.y};
  }
};

// Signed codes lo (values 4s..) and hi (16 + 4s..) with one scale: d * dx * sum q x.
struct SignedNibbleW {
  uint32_t lo, hi;
  float d;
  __device__ void dot(const NibbleX& x, float& acc) const {
    acc += d * (x.d * static_cast<float>(dot4(lo, x.lo, dot4(hi, x.hi, 0))));
  }
};

// Unsigned codes with a minimum: dx * (d * sum q x + m * sum x), the minimum added by slice 0.
struct MinNibbleW {
  uint32_t lo, hi;
  float d, m;
  __device__ void dot(const NibbleX& x, int s, float& acc) const {
    const float min_term = s == 0 ? m * static_cast<float>(x.sum) : 0.0f;
    acc += x.d * (d * static_cast<float>(dot4(lo, x.lo, dot4(hi, x.hi, 0))) + min_term);
  }
};

struct DotQ4_0 : BlockQ4_0 {
  static constexpr int kLanes = 4;
  static constexpr bool kTakesQ8 = true;
  using W = SignedNibbleW;
  using X = NibbleX;
  __device__ static W load_w(const uint8_t* block, int s) {
    const uint32_t q = load_word_a2(block + 2 + 4 * s);
    return {minus_bias(low_nibbles(q), 8), minus_bias(high_nibbles(q), 8), load_f16(block)};
  }
  __device__ static X load_x(const TokenActivations& t, int64_t b, int s) { return X::load(t, b, s); }
  __device__ static void dot(const W& w, const X& x, int, float& acc) { w.dot(x, acc); }
};

// IQ4_NL and MXFP4: the nibbles' levels as signed bytes, one scale.
template <class Block>
struct DotNibbleTable : Block {
  static constexpr int kLanes = 4;
  static constexpr bool kTakesQ8 = true;
  using W = SignedNibbleW;
  using X = NibbleX;
  // The levels of the four nibbles of `nibbles` (one per byte), as signed bytes.
  __device__ static uint32_t levels(uint32_t nibbles) {
    uint32_t out = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) out |= Block::level_byte(byte_of(nibbles, i)) << (8 * i);
    return out;
  }
  __device__ static W load_w(const uint8_t* block, int s) {
    const uint8_t* qs = block + Block::kQs + 4 * s;
    uint32_t q;
    if constexpr (Block::kAlign >= 2) {
      q = load_word_a2(qs);
    } else {
      q = load_u32_a1(qs);
    }
    return {levels(low_nibbles(q)), levels(high_nibbles(q)), Block::scale(block)};
  }
  __device__ static X load_x(const TokenActivations& t, int64_t b, int s) { return X::load(t, b, s); }
  __device__ static void dot(const W& w, const X& x, int, float& acc) { w.dot(x, acc); }
};
using DotIQ4_NL = DotNibbleTable<BlockIQ4_NL>;
using DotMXFP4 = DotNibbleTable<BlockMXFP4>;

// IQ4_XS: 32 threads, thread s takes qs word s % 4 of group s / 4 (IQ4_NL's slice of that group's
// 32-value x block), with the group's scale.
struct DotIQ4_XS : BlockIQ4_XS {
  static constexpr int kLanes = 32;
  static constexpr bool kTakesQ8 = true;
  using W = SignedNibbleW;
  using X = NibbleX;
  __device__ static W load_w(const uint8_t* block, int s) {
    const int group = s / 4;
    const uint32_t q = load_u32(block + 8 + 16 * group + 4 * (s % 4));
    return {DotIQ4_NL::levels(low_nibbles(q)), DotIQ4_NL::levels(high_nibbles(q)),
            BlockIQ4_XS::group_scale(block, group)};
  }
  __device__ static X load_x(const TokenActivations& t, int64_t b, int s) { return X::load(t, 8 * b + s / 4, s % 4); }
  __device__ static void dot(const W& w, const X& x, int, float& acc) { w.dot(x, acc); }
};

// The grid i-quants: 32 threads, thread s takes values 8s..8s+7 (Grid::point s) against quads
// 2(s % 4), 2(s % 4) + 1 of its group's 32-value x block.
template <class Block>
struct DotGrid : Block {
  static constexpr int kLanes = 32;
  static constexpr bool kTakesQ8 = true;
  struct W {
    uint32_t q[2];
    float d;
  };
  struct X {
    int q[2];
    float d;
  };
  __device__ static W load_w(const uint8_t* block, int s) {
    W w;
    w.d = Block::point(block, s, w.q);
    return w;
  }
  __device__ static X load_x(const TokenActivations& t, int64_t b, int s) {
    const int64_t xb = 8 * b + s / 4;
    return {{t.q8.quad(8 * xb + 2 * (s % 4)), t.q8.quad(8 * xb + 2 * (s % 4) + 1)}, __int_as_float(t.q8.meta[xb].x)};
  }
  __device__ static void dot(const W& w, const X& x, int, float& acc) {
    acc += w.d * (x.d * static_cast<float>(dot4(w.q[0], x.q[0], dot4(w.q[1], x.q[1], 0))));
  }
};
using DotIQ1_S = DotGrid<BlockIQ1_S>;
using DotIQ1_M = DotGrid<BlockIQ1_M>;
using DotIQ2_XXS = DotGrid<BlockIQ2_XXS>;
using DotIQ2_XS = DotGrid<BlockIQ2_XS>;
using DotIQ2_S = DotGrid<BlockIQ2_S>;
using DotIQ3_XXS = DotGrid<BlockIQ3_XXS>;
using DotIQ3_S = DotGrid<BlockIQ3_S>;

struct DotQ4_1 : BlockQ4_1 {
  static constexpr int kLanes = 4;
  static constexpr bool kTakesQ8 = true;
  using W = MinNibbleW;
  using X = NibbleX;
  __device__ static W load_w(const uint8_t* block, int s) {
    const uint32_t dm = load_u32(block), q = load_u32(block + 4 + 4 * s);
    return {low_nibbles(q), high_nibbles(q), half_lo(dm), half_hi(dm)};
  }
  __device__ static X load_x(const TokenActivations& t, int64_t b, int s) { return X::load(t, b, s); }
  __device__ static void dot(const W& w, const X& x, int s, float& acc) { w.dot(x, s, acc); }
};

// Q5_0 / Q5_1: the nibbles of qs word s with their fifth bits from qh (bit e of value e).
__device__ __forceinline__ void q5_codes(uint32_t q, uint32_t qh, int s, uint32_t& lo, uint32_t& hi) {
  lo = low_nibbles(q) | (spread_bits4((qh >> (4 * s)) & 15u) << 4);
  hi = high_nibbles(q) | (spread_bits4((qh >> (16 + 4 * s)) & 15u) << 4);
}

struct DotQ5_0 : BlockQ5_0 {
  static constexpr int kLanes = 4;
  static constexpr bool kTakesQ8 = true;
  using W = SignedNibbleW;
  using X = NibbleX;
  __device__ static W load_w(const uint8_t* block, int s) {
    uint32_t lo, hi;
    q5_codes(load_word_a2(block + 6 + 4 * s), load_word_a2(block + 2), s, lo, hi);
    return {minus_bias(lo, 16), minus_bias(hi, 16), load_f16(block)};
  }
  __device__ static X load_x(const TokenActivations& t, int64_t b, int s) { return X::load(t, b, s); }
  __device__ static void dot(const W& w, const X& x, int, float& acc) { w.dot(x, acc); }
};

struct DotQ5_1 : BlockQ5_1 {
  static constexpr int kLanes = 4;
  static constexpr bool kTakesQ8 = true;
  using W = MinNibbleW;
  using X = NibbleX;
  __device__ static W load_w(const uint8_t* block, int s) {
    const uint32_t dm = load_u32(block);
    uint32_t lo, hi;
    q5_codes(load_u32(block + 8 + 4 * s), load_u32(block + 4), s, lo, hi);
    return {lo, hi, half_lo(dm), half_hi(dm)};
  }
  __device__ static X load_x(const TokenActivations& t, int64_t b, int s) { return X::load(t, b, s); }
  __device__ static void dot(const W& w, const X& x, int s, float& acc) { w.dot(x, s, acc); }
};

// Thread s takes codes 8s..8s+7.
struct DotQ8_0 : BlockQ8_0 {
  static constexpr int kLanes = 4;
  static constexpr bool kTakesQ8 = true;
  struct W {
    uint32_t q[2];
    float d;
  };
  struct X {
    int2 q;
    float d;
  };
  __device__ static W load_w(const uint8_t* block, int s) {
    W w;
    load_words_a2(block + 2 + 8 * s, w.q);
    w.d = load_f16(block);
    return w;
  }
  __device__ static X load_x(const TokenActivations& t, int64_t b, int s) {
    return {t.q8.quads2(8 * b + 2 * s), t.q8.scale(b)};
  }
  __device__ static void dot(const W& w, const X& x, int, float& acc) {
    acc += w.d * (x.d * static_cast<float>(dot4(w.q[0], x.q.x, dot4(w.q[1], x.q.y, 0))));
  }
};

// ---- 256-value super-blocks -----------------------------------------------------------------

// Q2_K, Q3_K, TQ2_0: 16 threads, thread s takes the 2-bit codes of qs word s: for h = s / 8,
// m = s % 8, values 128h + 32j + 4m + 0..3 for j = 0..3, i.e. word m of 32-value x blocks
// 4h + j of the super-block.
struct CrumbX {
  int q[4];
  float d[4];
  __device__ static CrumbX load(const TokenActivations& t, int64_t b, int s) {
    CrumbX x;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int64_t part = 8 * b + 4 * (s / 8) + j;
      x.q[j] = t.q8.quad(8 * part + s % 8);
      x.d[j] = t.q8.scale(part);
    }
    return x;
  }
};

// {u8 scales[16]; u8 qs[64]; f16 d; f16 dmin}: per 16 values d * sc * q - dmin * mn.
struct DotQ2_K : BlockQ2_K {
  static constexpr int kLanes = 16;
  static constexpr bool kTakesQ8 = true;
  struct W {
    uint32_t q[4];
    float dl[4], ml[4];  // d * sc, dmin * mn of the 16 values of each j
  };
  using X = CrumbX;
  __device__ static W load_w(const uint8_t* block, int s) {
    const int h = s / 8, half = (s % 8) / 4;  // values 4m.. lie in 16-value sub-block 8h + 2j + half
    const uint32_t q = load_u32(block + 16 + 4 * s);
    const uint32_t sc01 = load_u32(block + 8 * h), sc23 = load_u32(block + 8 * h + 4), dd = load_u32(block + 80);
    const float d = half_lo(dd), dmin = half_hi(dd);
    W w;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const uint32_t sc = byte_of(j < 2 ? sc01 : sc23, half + 2 * (j % 2));
      w.q[j] = (q >> (2 * j)) & 0x03030303u;
      w.dl[j] = d * static_cast<float>(sc & 15u);
      w.ml[j] = dmin * static_cast<float>(sc >> 4);
    }
    return w;
  }
  __device__ static X load_x(const TokenActivations& t, int64_t b, int s) { return X::load(t, b, s); }
  __device__ static void dot(const W& w, const X& x, int, float& acc) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float qx = static_cast<float>(dot4(w.q[j], x.q[j], 0)),
                  sum_x = static_cast<float>(__dp4a(kOnes, x.q[j], 0));
      acc += x.d[j] * (w.dl[j] * qx - w.ml[j] * sum_x);
    }
  }
};

// Codes with one scale per j (Q3_K, TQ2_0): sum_j dx_j * d_j * sum q x.
struct CrumbW {
  uint32_t q[4];
  float d[4];
  __device__ void dot(const CrumbX& x, float& acc) const {
#pragma unroll
    for (int j = 0; j < 4; ++j) acc += x.d[j] * (d[j] * static_cast<float>(dot4(q[j], x.q[j], 0)));
  }
};

// {u8 hmask[32]; u8 qs[64]; u8 scales[12]; f16 d}: q = low2 + 4 * high - 4, per 16 values
// d * (S - 32).
struct DotQ3_K : BlockQ3_K {
  static constexpr int kLanes = 16;
  static constexpr bool kTakesQ8 = true;
  using W = CrumbW;
  using X = CrumbX;
  __device__ static W load_w(const uint8_t* block, int s) {
    const int h = s / 8, m = s % 8;
    const uint32_t q = load_word_a2(block + 32 + 4 * s), high = load_word_a2(block + 4 * m);
    uint32_t scales[3];
    load_words_a2(block + 96, scales);
    const float d = load_f16(block + 108);
    W w;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      w.q[j] = minus_bias(((q >> (2 * j)) & 0x03030303u) | (bit_of_bytes(high, 4 * h + j) << 2), 4);
      w.d[j] = d * static_cast<float>(q3k_scale(scales, 8 * h + 2 * j + m / 4));
    }
    return w;
  }
  __device__ static X load_x(const TokenActivations& t, int64_t b, int s) { return X::load(t, b, s); }
  __device__ static void dot(const W& w, const X& x, int, float& acc) { w.dot(x, acc); }
};

// {u8 qs[64]; f16 d}: q - 1.
struct DotTQ2_0 : BlockTQ2_0 {
  static constexpr int kLanes = 16;
  static constexpr bool kTakesQ8 = true;
  using W = CrumbW;
  using X = CrumbX;
  __device__ static W load_w(const uint8_t* block, int s) {
    const uint32_t q = load_word_a2(block + 4 * s);
    const float d = load_f16(block + 64);
    W w;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      w.q[j] = minus_bias((q >> (2 * j)) & 0x03030303u, 1);
      w.d[j] = d;
    }
    return w;
  }
  __device__ static X load_x(const TokenActivations& t, int64_t b, int s) { return X::load(t, b, s); }
  __device__ static void dot(const W& w, const X& x, int, float& acc) { w.dot(x, acc); }
};

// Q4_K, Q5_K, Q6_K: 16 threads, thread s takes 8 bytes of codes whose low nibbles are 8 values
// of one 32-value x block and whose high nibbles the same 8 of another.
struct PairX {
  int2 lo, hi;  // codes of the low / high nibbles' values
  float d[2];   // their x blocks' scales
  int sum[2];   // and sums
  __device__ static PairX load(const TokenActivations& t, int64_t part_lo, int64_t part_hi, int word) {
    const int2 meta_lo = t.q8.meta[part_lo], meta_hi = t.q8.meta[part_hi];
    return {t.q8.quads2(8 * part_lo + word),
            t.q8.quads2(8 * part_hi + word),
            {__int_as_float(meta_lo.x), __int_as_float(meta_hi.x)},
            {meta_lo.y, meta_hi.y}};
  }
};

// Q4_K / Q5_K codes with per-32 scale and min: dx * (d1 * sum q x - m1 * sum x), the min added
// by the first of the 4 threads of each 32 values.
struct ScaleMinW {
  uint32_t lo[2], hi[2];
  float dl[2], ml[2];  // d * sc, dmin * mn of the low and the high nibbles' sub-blocks
  __device__ void dot(const PairX& x, int s, float& acc) const {
    const bool first = s % 4 == 0;
    const float lo_dot = static_cast<float>(dot4(lo[0], x.lo.x, dot4(lo[1], x.lo.y, 0)));
    const float hi_dot = static_cast<float>(dot4(hi[0], x.hi.x, dot4(hi[1], x.hi.y, 0)));
    acc += x.d[0] * (dl[0] * lo_dot - (first ? ml[0] * static_cast<float>(x.sum[0]) : 0.0f));
    acc += x.d[1] * (dl[1] * hi_dot - (first ? ml[1] * static_cast<float>(x.sum[1]) : 0.0f));
  }
  // The scales and mins of sub-blocks 2c and 2c + 1 from the block's first 16 bytes.
  __device__ void set_scales(uint4 head, int c) {
    const uint32_t scales[3] = {head.y, head.z, head.w};
    const float d = half_lo(head.x), dmin = half_hi(head.x);
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      int sc, mn;
      scale_min_k4(scales, 2 * c + k, sc, mn);
      dl[k] = d * static_cast<float>(sc);
      ml[k] = dmin * static_cast<float>(mn);
    }
  }
};

// Thread s of a Q4_K / Q5_K block: c = s / 4 (64-value chunk), bytes 8 (s % 4).. of its 32;
// values 64c + 8 (s % 4) + 0..7 (low nibbles, x block 2c) and 32 more (high, 2c + 1).
__device__ __forceinline__ PairX load_k4_x(const TokenActivations& t, int64_t b, int s) {
  const int64_t part = 8 * b + 2 * (s / 4);
  return PairX::load(t, part, part + 1, 2 * (s % 4));
}

struct DotQ4_K : BlockQ4_K {
  static constexpr int kLanes = 16;
  static constexpr bool kTakesQ8 = true;
  using W = ScaleMinW;
  using X = PairX;
  __device__ static W load_w(const uint8_t* block, int s) {
    const int c = s / 4;
    const uint2 q = *reinterpret_cast<const uint2*>(block + 16 + 32 * c + 8 * (s % 4));
    W w;
    w.set_scales(*reinterpret_cast<const uint4*>(block), c);
    w.lo[0] = low_nibbles(q.x), w.lo[1] = low_nibbles(q.y);
    w.hi[0] = high_nibbles(q.x), w.hi[1] = high_nibbles(q.y);
    return w;
  }
  __device__ static X load_x(const TokenActivations& t, int64_t b, int s) { return load_k4_x(t, b, s); }
  __device__ static void dot(const W& w, const X& x, int s, float& acc) { w.dot(x, s, acc); }
};

// Q5_K's fifth bits: qh[l] bit i for value 32i + l.
struct DotQ5_K : BlockQ5_K {
  static constexpr int kLanes = 16;
  static constexpr bool kTakesQ8 = true;
  using W = ScaleMinW;
  using X = PairX;
  __device__ static W load_w(const uint8_t* block, int s) {
    const int c = s / 4;
    const uint2 qh = *reinterpret_cast<const uint2*>(block + 16 + 8 * (s % 4));
    const uint2 q = *reinterpret_cast<const uint2*>(block + 48 + 32 * c + 8 * (s % 4));
    W w;
    w.set_scales(*reinterpret_cast<const uint4*>(block), c);
    w.lo[0] = low_nibbles(q.x) | (bit_of_bytes(qh.x, 2 * c) << 4);
    w.lo[1] = low_nibbles(q.y) | (bit_of_bytes(qh.y, 2 * c) << 4);
    w.hi[0] = high_nibbles(q.x) | (bit_of_bytes(qh.x, 2 * c + 1) << 4);
    w.hi[1] = high_nibbles(q.y) | (bit_of_bytes(qh.y, 2 * c + 1) << 4);
    return w;
  }
  __device__ static X load_x(const TokenActivations& t, int64_t b, int s) { return load_k4_x(t, b, s); }
  __device__ static void dot(const W& w, const X& x, int s, float& acc) { w.dot(x, s, acc); }
};

// {u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d}: thread s = 8h + 4g + m takes ql bytes 8s..8s+7:
// values 128h + 32g + 8m + 0..7 (low nibbles) and 64 more (high nibbles), with their 2 high
// bits from qh bytes 32h + 8m.. (bits 2g and 2g + 4).
struct DotQ6_K : BlockQ6_K {
  static constexpr int kLanes = 16;
  static constexpr bool kTakesQ8 = true;
  struct W {
    uint32_t lo[2], hi[2];
    float dl[2];  // d * scale of the low and the high nibbles' 16-value sub-blocks
  };
  using X = PairX;
  __device__ static W load_w(const uint8_t* block, int s) {
    const int h = s / 8, g = (s / 4) % 2, m = s % 4;
    uint32_t ql[2], qh[2];
    load_words_a2(block + 8 * s, ql);
    load_words_a2(block + 128 + 32 * h + 8 * m, qh);
    const float d = load_f16(block + 208);
    const int sub = 8 * h + 2 * g + m / 2;
    W w;
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      w.lo[k] = minus_bias(low_nibbles(ql[k]) | (((qh[k] >> (2 * g)) & 0x03030303u) << 4), 32);
      w.hi[k] = minus_bias(high_nibbles(ql[k]) | (((qh[k] >> (2 * g + 4)) & 0x03030303u) << 4), 32);
    }
    w.dl[0] = d * static_cast<float>(static_cast<int8_t>(block[192 + sub]));
    w.dl[1] = d * static_cast<float>(static_cast<int8_t>(block[192 + sub + 4]));
    return w;
  }
  __device__ static X load_x(const TokenActivations& t, int64_t b, int s) {
    const int64_t part = 8 * b + 4 * (s / 8) + (s / 4) % 2;
    return PairX::load(t, part, part + 2, 2 * (s % 4));
  }
  __device__ static void dot(const W& w, const X& x, int, float& acc) {
    const float lo_dot = static_cast<float>(dot4(w.lo[0], x.lo.x, dot4(w.lo[1], x.lo.y, 0)));
    const float hi_dot = static_cast<float>(dot4(w.hi[0], x.hi.x, dot4(w.hi[1], x.hi.y, 0)));
    acc += x.d[0] * (w.dl[0] * lo_dot) + x.d[1] * (w.dl[1] * hi_dot);
  }
};

// {u8 qs[48]; u8 qh[4]; f16 d}: 32 threads, thread s takes values 8s..8s+7 (x block s / 4,
// words 2 (s % 4) and 2 (s % 4) + 1), two words of base-3 digits: the digit of values
// 32p + l (p < 5) in qs[l]; of 160 + 16n + l in qs[32 + l] (l < 16); of 240 + 4n + l in qh[l].
struct DotTQ1_0 : BlockTQ1_0 {
  static constexpr int kLanes = 32;
  static constexpr bool kTakesQ8 = true;
  struct W {
    uint32_t q[2];
    float d;
  };
  struct X {
    int2 q;
    float d;
  };
  // The digits `digit` of the four bytes of w, as the signed bytes digit - 1.
  __device__ static uint32_t codes(uint32_t w, int digit) {
    uint32_t out = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) out |= tq1_digit(byte_of(w, i), digit) << (8 * i);
    return minus_bias(out, 1);
  }
  __device__ static W load_w(const uint8_t* block, int s) {
    const int p = s / 4, r = s % 4;  // x block p, values 8r.. of it
    const uint8_t* first = block + 8 * r;
    const uint8_t* second = first + 4;
    int digit_first = p, digit_second = p;
    if (p == 5 || p == 6) {  // values 160 + 32 (p - 5) + 8r..: bytes 32 + 8 (r % 2).., digits 2 (p - 5) + r / 2
      first = block + 32 + 8 * (r % 2), second = first + 4;
      digit_first = digit_second = 2 * (p - 5) + r / 2;
    } else if (p == 7 && r < 2) {  // values 224 + 8r..: digit 4 of bytes 32 + 8r..
      first = block + 32 + 8 * r, second = first + 4;
      digit_first = digit_second = 4;
    } else if (p == 7) {  // values 240 + 8 (r - 2)..: digits 2 (r - 2) and 2 (r - 2) + 1 of qh
      first = second = block + 48;
      digit_first = 2 * (r - 2), digit_second = digit_first + 1;
    }
    return {{codes(load_word_a2(first), digit_first), codes(load_word_a2(second), digit_second)}, load_f16(block + 52)};
  }
  __device__ static X load_x(const TokenActivations& t, int64_t b, int s) {
    const int64_t part = 8 * b + s / 4;
    return {t.q8.quads2(8 * part + 2 * (s % 4)), t.q8.scale(part)};
  }
  __device__ static void dot(const W& w, const X& x, int, float& acc) {
    acc += w.d * (x.d * static_cast<float>(dot4(w.q[0], x.q.x, dot4(w.q[1], x.q.y, 0))));
  }
};

// ---- Float types: F32 activations, FMA --------------------------------------------------------

// 16 bytes of F32 (4 values) per thread: rows, x 16-byte aligned, cols % 4 == 0.
struct DotF32x4 {
  static constexpr kernels::GgmlType kType = kernels::GgmlType::F32;
  static constexpr int kValues = 4, kBytes = 16, kAlign = 16, kLanes = 1;
  static constexpr bool kTakesQ8 = false;
  using W = float4;
  using X = float4;
  __device__ static W load_w(const uint8_t* block, int) { return *reinterpret_cast<const float4*>(block); }
  __device__ static X load_x(const TokenActivations& t, int64_t b, int) {
    return reinterpret_cast<const float4*>(t.x)[b];
  }
  __device__ static void dot(const W& w, const X& x, int, float& acc) {
    acc = fmaf(w.x, x.x, fmaf(w.y, x.y, fmaf(w.z, x.z, fmaf(w.w, x.w, acc))));
  }
};

// 16 bytes of F16 or BF16 (8 values) per thread: rows, x 16-byte aligned, cols % 8 == 0.
template <class Block>
struct DotHalfx8 {
  static constexpr kernels::GgmlType kType = Block::kType;
  static constexpr int kValues = 8, kBytes = 16, kAlign = 16, kLanes = 1;
  static constexpr bool kTakesQ8 = false;
  struct W {
    float v[8];
  };
  struct X {
    float4 a, b;
  };
  __device__ static float widen(uint32_t bits) {
    if constexpr (Block::kType == kernels::GgmlType::BF16) {
      return bf16_bits_to_float(bits);
    } else {
      return half_lo(bits);
    }
  }
  __device__ static W load_w(const uint8_t* block, int) {
    const uint4 q = *reinterpret_cast<const uint4*>(block);
    const uint32_t words[4] = {q.x, q.y, q.z, q.w};
    W w;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      w.v[2 * i] = widen(words[i] & 0xFFFFu);
      w.v[2 * i + 1] = widen(words[i] >> 16);
    }
    return w;
  }
  __device__ static X load_x(const TokenActivations& t, int64_t b, int) {
    const float4* x = reinterpret_cast<const float4*>(t.x);
    return {x[2 * b], x[2 * b + 1]};
  }
  __device__ static void dot(const W& w, const X& x, int, float& acc) {
    acc = fmaf(w.v[0], x.a.x, fmaf(w.v[1], x.a.y, fmaf(w.v[2], x.a.z, fmaf(w.v[3], x.a.w, acc))));
    acc = fmaf(w.v[4], x.b.x, fmaf(w.v[5], x.b.y, fmaf(w.v[6], x.b.z, fmaf(w.v[7], x.b.w, acc))));
  }
};

// One value per thread, for rows or x without the alignment of the wide forms.
template <class Block>
struct DotScalar : Block {
  static constexpr int kLanes = 1;
  static constexpr bool kTakesQ8 = false;
  using W = float;
  using X = float;
  __device__ static W load_w(const uint8_t* block, int) { return Block::value(block); }
  __device__ static X load_x(const TokenActivations& t, int64_t b, int) { return t.x[b]; }
  __device__ static void dot(const W& w, const X& x, int, float& acc) { acc = fmaf(w, x, acc); }
};

// F16_2OF4: 4 threads, thread s takes sparse groups 2s and 2s + 1 (values 8s..8s+7): their four
// kept values and positions, against the 8 values of x they cover (kVectorX: two 16-byte loads,
// x 16-byte aligned).
template <bool kVectorX>
struct DotF16x2of4 : BlockF16x2of4 {
  static constexpr int kLanes = 4;
  static constexpr bool kTakesQ8 = false;
  struct W {
    float kept[4];     // group 2s's first and second kept values, then group 2s + 1's
    uint32_t nibbles;  // their positions: bits 0-3 group 2s's, 4-7 group 2s + 1's
  };
  struct X {
    float4 g[2];  // the values of groups 2s and 2s + 1
  };
  __device__ static W load_w(const uint8_t* block, int s) {
    const uint32_t a = load_u32(block + 8 * s), b = load_u32(block + 8 * s + 4);
    return {{half_lo(a), half_hi(a), half_lo(b), half_hi(b)}, block[32 + s]};
  }
  __device__ static X load_x(const TokenActivations& t, int64_t b, int s) {
    const float* x = t.x + 32 * b + 8 * s;
    if constexpr (kVectorX) {
      return {{reinterpret_cast<const float4*>(x)[0], reinterpret_cast<const float4*>(x)[1]}};
    } else {
      return {{make_float4(x[0], x[1], x[2], x[3]), make_float4(x[4], x[5], x[6], x[7])}};
    }
  }
  __device__ static float pick(const float4& v, uint32_t i) {
    return i == 0 ? v.x : (i == 1 ? v.y : (i == 2 ? v.z : v.w));
  }
  __device__ static void dot(const W& w, const X& x, int, float& acc) {
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      const uint32_t nib = (w.nibbles >> (4 * k)) & 15u;
      acc = fmaf(w.kept[2 * k], pick(x.g[k], nib & 3u), acc);
      acc = fmaf(w.kept[2 * k + 1], pick(x.g[k], nib >> 2), acc);
    }
  }
};

}  // namespace inferscope::cuda_kernels
