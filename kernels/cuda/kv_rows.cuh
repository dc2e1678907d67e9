// KV-cache rows on the device (device functions for attention.cu, kv_store.cu, kv_rotate.cu):
// the pool row of a position (chunk_rows.h), values of a row decoded to F32 as
// kernels::kv_dequantize decodes them, and F32 values encoded byte-identically to
// kernels::kv_quantize_row (formats: kernels/formats/kv_type.h). Rows and blocks start at even
// bytes, so every 16-bit field is an aligned load; F16 rows of heads of even size also hold
// each value pair (2i, 2i + 1) in one aligned 32-bit word.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/chunk_rows.h"
#include "kernels/formats/kv_type.h"

namespace inferscope::cuda_kernels {

constexpr int kKvValuesPerBlock = 32;
constexpr int kNf4LevelCount = 16;

// Pool row of position x of the sequence whose block table is `table` (pool blocks of
// 2^block_shift rows).
__device__ __forceinline__ int64_t kv_pool_row(const int32_t* table, int x, int block_shift) {
  return (static_cast<int64_t>(table[x >> block_shift]) << block_shift) | (x & ((1 << block_shift) - 1));
}

// NormalFloat-4 level c (kernels::kNf4Levels). Kernels copy the 16 levels into shared memory
// once (kv_load_nf4_levels) and index that copy: a table lookup per code.
__device__ __forceinline__ float kv_nf4_level(int c) {
  switch (c) {
    case 0: return -1.0f;
    case 1: return -0.6961928009986877f;
    case 2: return -0.5250730514526367f;
    case 3: return -0.39491748809814453f;
    case 4: return -0.28444138169288635f;
    case 5: return -0.18477343022823334f;
    case 6: return -0.09105003625154495f;
    case 7: return 0.0f;
    case 8: return 0.07958029955625534f;
    case 9: return 0.16093020141124725f;
    case 10: return 0.24611230194568634f;
    case 11: return 0.33791524171829224f;
    case 12: return 0.44070982933044434f;
    case 13: return 0.5626170039176941f;
    case 14: return 0.7229568362236023f;
    default: return 1.0f;
  }
}

// levels: kNf4LevelCount floats of shared memory; readable after the caller's next
// __syncthreads().
__device__ __forceinline__ void kv_load_nf4_levels(float* levels) {
  if (threadIdx.x < kNf4LevelCount) levels[threadIdx.x] = kv_nf4_level(threadIdx.x);
}

__device__ __forceinline__ uint16_t kv_load_u16(const uint8_t* p) { return *reinterpret_cast<const uint16_t*>(p); }
__device__ __forceinline__ void kv_store_u16(uint8_t* p, unsigned v) {
  *reinterpret_cast<uint16_t*>(p) = static_cast<uint16_t>(v);
}
__device__ __forceinline__ float kv_f16_value(unsigned bits) {
  return __half2float(__ushort_as_half(static_cast<unsigned short>(bits)));
}

// F16 bits of x rounded to nearest even, as kernels::fp32_to_fp16 (NaN: 0x7E00 with x's sign).
__device__ __forceinline__ unsigned kv_f16_bits(float x) {
  const unsigned bits = __float_as_uint(x);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return ((bits >> 16) & 0x8000u) | 0x7E00u;
  return __half_as_ushort(__float2half_rn(x));
}

__host__ __device__ constexpr int kv_block_bytes(kernels::KvType type) {
  return type == kernels::KvType::Q8_0 ? static_cast<int>(kernels::kKvQ8BlockBytes)
                                       : static_cast<int>(kernels::kKvNibbleBlockBytes);
}

// Values a row length must be a multiple of (kernels::kv_row_granule, for host code that does
// not link the CPU kernels).
constexpr int64_t kv_granule(kernels::KvType type) { return type == kernels::KvType::F16 ? 2 : kKvValuesPerBlock; }

// Values i and i + 1 (i even) of a row of type T; nf4: the levels (NF4 only).
template <kernels::KvType T>
__device__ __forceinline__ float2 kv_pair(const uint8_t* row, int i, const float* nf4) {
  using kernels::KvType;
  if constexpr (T == KvType::F16) {
    const uint32_t word = *reinterpret_cast<const uint32_t*>(row + 2 * i);
    return make_float2(kv_f16_value(word & 0xFFFFu), kv_f16_value(word >> 16));
  } else {
    const uint8_t* block = row + (i / kKvValuesPerBlock) * kv_block_bytes(T);
    const float d = kv_f16_value(kv_load_u16(block));
    const int j = i % kKvValuesPerBlock;
    if constexpr (T == KvType::Q8_0) {
      const unsigned codes = kv_load_u16(block + 2 + j);
      return make_float2(d * static_cast<float>(static_cast<int8_t>(codes & 0xFFu)),
                         d * static_cast<float>(static_cast<int8_t>(codes >> 8)));
    } else {
      // Bytes j % 16 and the next: values j, j + 1 in their low nibbles, or in the high ones
      // for j >= 16.
      const unsigned codes = kv_load_u16(block + 2 + j % 16) >> (j < 16 ? 0 : 4);
      const int c0 = codes & 0xF, c1 = (codes >> 8) & 0xF;
      if constexpr (T == KvType::NF4) return make_float2(d * nf4[c0], d * nf4[c1]);
      return make_float2(d * static_cast<float>(c0 - 8), d * static_cast<float>(c1 - 8));
    }
  }
}

// Value i of a row of `type`.
__device__ __forceinline__ float kv_value(kernels::KvType type, const uint8_t* row, int i, const float* nf4) {
  using kernels::KvType;
  float2 pair;
  switch (type) {
    case KvType::F16: pair = kv_pair<KvType::F16>(row, i & ~1, nf4); break;
    case KvType::Q8_0: pair = kv_pair<KvType::Q8_0>(row, i & ~1, nf4); break;
    case KvType::NF4: pair = kv_pair<KvType::NF4>(row, i & ~1, nf4); break;
    default: pair = kv_pair<KvType::Q4_0>(row, i & ~1, nf4); break;  // Q4_0 and INT4 decode alike
  }
  return (i & 1) ? pair.y : pair.x;
}

// ---------------------------------------------------------------------------------- encoding
// The CPU's quantizers (kernels/cpu/kv_quant.cpp, quantize.cpp) operation by operation:
// divisions correctly rounded, products and sums unfused.

// The 4-bit code of v = x / d of each type (NF4: the nearest level, ties to the lower one).
template <kernels::KvType T>
__device__ __forceinline__ int kv_nibble_code(float v, const float* nf4) {
  using kernels::KvType;
  if constexpr (T == KvType::Q4_0) {
    const float a = __fadd_rn(v, 8.5f);
    return a >= 15.0f ? 15 : (a > 0.0f ? static_cast<int>(a) : 0);
  } else if constexpr (T == KvType::NF4) {
    int c = 0;
    for (int i = 0; i + 1 < kNf4LevelCount; ++i) c += v > 0.5f * (nf4[i] + nf4[i + 1]) ? 1 : 0;
    return c;
  } else {
    const float r = roundf(v);
    return 8 + static_cast<int>(r > 7.0f ? 7.0f : (r < -7.0f ? -7.0f : r));
  }
}

// Encodes block b (values [32b, 32b + 32) of x) of a row of quantized type T.
template <kernels::KvType T>
__device__ __forceinline__ void kv_encode_block(const float* x, uint8_t* row, int b, const float* nf4) {
  using kernels::KvType;
  const float* xb = x + b * kKvValuesPerBlock;
  uint8_t* block = row + b * kv_block_bytes(T);
  float amax = 0.0f, signed_max = 0.0f;  // Q4_0: the first value of the largest magnitude
  for (int j = 0; j < kKvValuesPerBlock; ++j) {
    if constexpr (T == KvType::Q4_0) {
      if (amax < fabsf(xb[j])) {
        amax = fabsf(xb[j]);
        signed_max = xb[j];
      }
    } else {
      amax = fmaxf(amax, fabsf(xb[j]));
    }
  }
  float d = amax;  // NF4
  if constexpr (T == KvType::Q8_0) d = __fdiv_rn(amax, 127.0f);
  if constexpr (T == KvType::Q4_0) d = __fdiv_rn(signed_max, -8.0f);
  if constexpr (T == KvType::Int4) d = __fdiv_rn(amax, 7.0f);
  const float id = d != 0.0f ? __fdiv_rn(1.0f, d) : 0.0f;
  kv_store_u16(block, kv_f16_bits(d));
  if constexpr (T == KvType::Q8_0) {
    for (int j = 0; j < kKvValuesPerBlock; j += 2) {
      const int q0 = static_cast<int8_t>(roundf(__fmul_rn(xb[j], id)));
      const int q1 = static_cast<int8_t>(roundf(__fmul_rn(xb[j + 1], id)));
      kv_store_u16(block + 2 + j, (q0 & 0xFF) | ((q1 & 0xFF) << 8));
    }
  } else {
    // Byte j: value j's code in the low nibble, value j + 16's in the high one.
    for (int j = 0; j < kKvValuesPerBlock / 2; j += 2) {
      const int lo0 = kv_nibble_code<T>(__fmul_rn(xb[j], id), nf4);
      const int hi0 = kv_nibble_code<T>(__fmul_rn(xb[j + 16], id), nf4);
      const int lo1 = kv_nibble_code<T>(__fmul_rn(xb[j + 1], id), nf4);
      const int hi1 = kv_nibble_code<T>(__fmul_rn(xb[j + 17], id), nf4);
      kv_store_u16(block + 2 + j, (lo0 | (hi0 << 4)) | ((lo1 | (hi1 << 4)) << 8));
    }
  }
}

// Encodes x ([n] F32) as a row of type T, kernels::kv_quantize_row's bytes, the block's
// threads sharing the work (F16: a value pair each; quantized: a 32-value block each).
// Precondition: n % kernels::kv_row_granule(T) == 0.
template <kernels::KvType T>
__device__ __forceinline__ void kv_encode_row_as(const float* x, uint8_t* row, int n, const float* nf4) {
  if constexpr (T == kernels::KvType::F16) {
    for (int i = threadIdx.x; i < n / 2; i += blockDim.x) {
      *reinterpret_cast<uint32_t*>(row + 4 * i) = kv_f16_bits(x[2 * i]) | (kv_f16_bits(x[2 * i + 1]) << 16);
    }
  } else {
    for (int b = threadIdx.x; b < n / kKvValuesPerBlock; b += blockDim.x) kv_encode_block<T>(x, row, b, nf4);
  }
}

__device__ __forceinline__ void kv_encode_row(kernels::KvType type, const float* x, uint8_t* row, int n,
                                              const float* nf4) {
  using kernels::KvType;
  switch (type) {
    case KvType::F16: kv_encode_row_as<KvType::F16>(x, row, n, nf4); return;
    case KvType::Q8_0: kv_encode_row_as<KvType::Q8_0>(x, row, n, nf4); return;
    case KvType::Q4_0: kv_encode_row_as<KvType::Q4_0>(x, row, n, nf4); return;
    case KvType::NF4: kv_encode_row_as<KvType::NF4>(x, row, n, nf4); return;
    case KvType::Int4: kv_encode_row_as<KvType::Int4>(x, row, n, nf4); return;
  }
}

}  // namespace inferscope::cuda_kernels
