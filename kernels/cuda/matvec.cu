// The decode GEMV (matvec.h): y = W x for up to kMaxMatvecRows tokens with the weights in their
// GGUF blocks, and the int8 activations it reads for the quantized types.
//
// One thread block of kWarps warps computes kRows consecutive rows for every token: its threads
// stride over the rows' slices (block_dots.cuh: kLanes threads per weight block, neighbouring
// threads on neighbouring words), load each slice's weights once for all tokens, and accumulate
// in F32 registers; warp shuffles, then shared memory, add up the threads. The weights are read
// once per launch whatever the number of tokens; the activations, small, come from the cache.
//
// Alignment (matvec.h): F32, F16 and BF16 rows, and the F32 x of the float types, read 16 bytes
// per thread when 16-byte aligned (and cols a multiple of 4 / 8 values), else one value.
#include "kernels/cuda/matvec.h"

#include "kernels/cuda/block_dots.cuh"
#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/q8_activations.cuh"

namespace inferscope::cuda_kernels {
namespace {

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
constexpr unsigned kMaxGridY = 65535;

// ---- Quantizing the activations -------------------------------------------------------------

// Thread i takes values 4i..4i+3 of the [rows][cols] x; the 8 threads of a 32-value block share
// its scale and sum by shuffles (so every thread of a warp runs them, in range or not).
__global__ void __launch_bounds__(kThreads)
    quantize_q8_rows(const float* __restrict__ x, int64_t rows, int64_t cols, uint8_t* __restrict__ q8) {
  const int64_t quads_per_row = cols / 4;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool in_range = i < rows * quads_per_row;
  const float4 v = in_range ? reinterpret_cast<const float4*>(x)[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float amax = fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w)));
#pragma unroll
  for (int offset = 4; offset > 0; offset /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, offset));
  const float d = __fdiv_rn(amax, 127.0f);  // correctly rounded, as the CPU's, whatever the math flags
  const float inv_d = d != 0.0f ? __frcp_rn(d) : 0.0f;
  const int q0 = static_cast<int>(roundf(v.x * inv_d)), q1 = static_cast<int>(roundf(v.y * inv_d));
  const int q2 = static_cast<int>(roundf(v.z * inv_d)), q3 = static_cast<int>(roundf(v.w * inv_d));
  int sum = q0 + q1 + q2 + q3;
#pragma unroll
  for (int offset = 4; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (!in_range) return;
  const int64_t row = i / quads_per_row, quad = i % quads_per_row;
  uint8_t* out = q8 + row * q8_row_bytes(cols);
  reinterpret_cast<uint32_t*>(out)[quad] =
      (static_cast<uint32_t>(q0) & 0xFFu) | ((static_cast<uint32_t>(q1) & 0xFFu) << 8) |
      ((static_cast<uint32_t>(q2) & 0xFFu) << 16) | (static_cast<uint32_t>(q3) << 24);
  if (quad % 8 == 0) {
    const float d_f16 = __half2float(__float2half_rn(d));  // the CPU's scale, as stored in F16
    reinterpret_cast<int2*>(out + cols)[quad / 8] = make_int2(__float_as_int(d_f16), sum);
  }
}

// ---- The products ---------------------------------------------------------------------------

struct MatvecArgs {
  const uint8_t* w;  // matrix 0
  int64_t rows, row_bytes, matrix_bytes, n_mats;
  int64_t cols;
  const float* x;     // [..][cols] F32
  const uint8_t* q8;  // [..] rows of q8_row_bytes(cols)
  float* y;
  int64_t y_stride;
  int n;               // tokens (launch_matvec)
  const int32_t* ids;  // [pairs] (launch_matvec_experts)
  int64_t k, pairs;
  bool x_per_pair;
};

template <class Dot>
__device__ __forceinline__ TokenActivations token_activations(const MatvecArgs& a, int64_t x_row) {
  TokenActivations token{};
  if constexpr (Dot::kTakesQ8) {
    token.q8 = Q8Row::at(a.q8, a.cols, x_row);
  } else {
    token.x = a.x + x_row * a.cols;
  }
  return token;
}

// y[t * y_stride + r] = matrix[r] . x row (x_row0 + t) for t < n, r in this block's kRows rows;
// zeros when !valid. Every thread of the block calls it.
template <class Dot, int kMaxN, int kRows>
__device__ void matvec_block_rows(const MatvecArgs& a, const uint8_t* matrix, int64_t x_row0, int n, bool valid,
                                  float* y, int64_t y_stride) {
  __shared__ float partial[kWarps][kRows * kMaxN];
  const int64_t row0 = static_cast<int64_t>(blockIdx.x) * kRows;
  const uint8_t* row_data[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) row_data[r] = matrix + min(row0 + r, a.rows - 1) * a.row_bytes;

  float acc[kRows][kMaxN] = {};
  const int64_t slices = valid ? a.cols / Dot::kValues * Dot::kLanes : 0;
  const int s = static_cast<int>(threadIdx.x % Dot::kLanes);  // the same slice of every block it visits
  for (int64_t i = threadIdx.x; i < slices; i += blockDim.x) {
    const int64_t b = i / Dot::kLanes;
    typename Dot::W w[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) w[r] = Dot::load_w(row_data[r] + b * Dot::kBytes, s);
#pragma unroll
    for (int t = 0; t < kMaxN; ++t) {
      if (t >= n) break;
      const typename Dot::X x = Dot::load_x(token_activations<Dot>(a, x_row0 + t), b, s);
#pragma unroll
      for (int r = 0; r < kRows; ++r) Dot::dot(w[r], x, s, acc[r][t]);
    }
  }

  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
#pragma unroll
    for (int t = 0; t < kMaxN; ++t) {
      if (t >= n) break;
      const float sum = warp_sum(acc[r][t]);
      if (lane == 0) partial[warp][r * kMaxN + t] = sum;
    }
  }
  __syncthreads();
  if (threadIdx.x < kRows * kMaxN) {
    const int r = static_cast<int>(threadIdx.x) / kMaxN, t = static_cast<int>(threadIdx.x) % kMaxN;
    if (row0 + r < a.rows && t < n) {
      float sum = 0.0f;
#pragma unroll
      for (int v = 0; v < kWarps; ++v) sum += partial[v][threadIdx.x];
      y[t * y_stride + row0 + r] = sum;
    }
  }
  __syncthreads();  // `partial` is rewritten by the block's next call
}

// Block x: rows [x * kRows, ...) of matrix 0 for the n tokens of x.
template <class Dot, int kMaxN, int kRows>
__global__ void __launch_bounds__(kThreads) matvec_rows(MatvecArgs a) {
  matvec_block_rows<Dot, kMaxN, kRows>(a, a.w, 0, a.n, true, a.y, a.y_stride);
}

// Block (x, y): rows [x * kRows, ...) of pairs y, y + gridDim.y...: expert ids[pair] times the
// pair's x row, into y[pair][rows].
template <class Dot, int kRows>
__global__ void __launch_bounds__(kThreads) matvec_expert_rows(MatvecArgs a) {
  for (int64_t pair = blockIdx.y; pair < a.pairs; pair += gridDim.y) {
    const int32_t id = a.ids[pair];
    const bool valid = id >= 0 && id < a.n_mats;
    const uint8_t* matrix = a.w + (valid ? id : 0) * a.matrix_bytes;
    const int64_t x_row = a.x_per_pair ? pair : pair / a.k;
    matvec_block_rows<Dot, 1, kRows>(a, matrix, x_row, 1, valid, a.y + pair * a.rows, 0);
  }
}

// ---- Dispatch -------------------------------------------------------------------------------

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Calls f(Dot{}) with the Dot type that reads `w` with these activations, or returns
// cudaErrorInvalidValue when none can.
template <class F>
cudaError_t with_dot(const DeviceWeight& w, const float* x, F&& f) {
  using kernels::GgmlType;
  const auto fits = [&](auto dot) {
    return rows_fit_block<decltype(dot)>(w.data, w.cols, w.row_bytes, w.matrix_bytes);
  };
  switch (w.type) {
    case GgmlType::F32:
      if (aligned16(x) && fits(DotF32x4{})) return f(DotF32x4{});
      return fits(DotScalar<BlockF32>{}) ? f(DotScalar<BlockF32>{}) : cudaErrorInvalidValue;
    case GgmlType::F16:
      if (aligned16(x) && fits(DotHalfx8<BlockF16>{})) return f(DotHalfx8<BlockF16>{});
      return fits(DotScalar<BlockF16>{}) ? f(DotScalar<BlockF16>{}) : cudaErrorInvalidValue;
    case GgmlType::BF16:
      if (aligned16(x) && fits(DotHalfx8<BlockBF16>{})) return f(DotHalfx8<BlockBF16>{});
      return fits(DotScalar<BlockBF16>{}) ? f(DotScalar<BlockBF16>{}) : cudaErrorInvalidValue;
    case GgmlType::F16_2OF4:
      if (!fits(DotF16x2of4<true>{})) return cudaErrorInvalidValue;
      return aligned16(x) ? f(DotF16x2of4<true>{}) : f(DotF16x2of4<false>{});
    default:
      break;
  }
  const auto quantized = [&](auto dot) { return fits(dot) ? f(dot) : cudaErrorInvalidValue; };
  switch (w.type) {
    case GgmlType::Q4_0:
      return quantized(DotQ4_0{});
    case GgmlType::Q4_1:
      return quantized(DotQ4_1{});
    case GgmlType::Q5_0:
      return quantized(DotQ5_0{});
    case GgmlType::Q5_1:
      return quantized(DotQ5_1{});
    case GgmlType::Q8_0:
      return quantized(DotQ8_0{});
    case GgmlType::IQ4_NL:
      return quantized(DotIQ4_NL{});
    case GgmlType::MXFP4:
      return quantized(DotMXFP4{});
    case GgmlType::IQ4_XS:
      return quantized(DotIQ4_XS{});
    case GgmlType::IQ1_S:
      return quantized(DotIQ1_S{});
    case GgmlType::IQ1_M:
      return quantized(DotIQ1_M{});
    case GgmlType::IQ2_XXS:
      return quantized(DotIQ2_XXS{});
    case GgmlType::IQ2_XS:
      return quantized(DotIQ2_XS{});
    case GgmlType::IQ2_S:
      return quantized(DotIQ2_S{});
    case GgmlType::IQ3_XXS:
      return quantized(DotIQ3_XXS{});
    case GgmlType::IQ3_S:
      return quantized(DotIQ3_S{});
    case GgmlType::Q2_K:
      return quantized(DotQ2_K{});
    case GgmlType::Q3_K:
      return quantized(DotQ3_K{});
    case GgmlType::Q4_K:
      return quantized(DotQ4_K{});
    case GgmlType::Q5_K:
      return quantized(DotQ5_K{});
    case GgmlType::Q6_K:
      return quantized(DotQ6_K{});
    case GgmlType::TQ1_0:
      return quantized(DotTQ1_0{});
    case GgmlType::TQ2_0:
      return quantized(DotTQ2_0{});
    default:
      return cudaErrorInvalidValue;
  }
}

bool is_quantized(kernels::GgmlType type) {
  using kernels::GgmlType;
  return matvec_supports(type) && type != GgmlType::F32 && type != GgmlType::F16 && type != GgmlType::BF16 &&
         type != GgmlType::F16_2OF4;
}

int64_t block_values(kernels::GgmlType type) {
  int64_t values = 0;
  static_cast<void>(with_weight_block(type, [&](auto block) {
    values = decltype(block)::kValues;
    return cudaSuccess;
  }));
  return values;
}

// Whether the activations the Dot reads are there and aligned.
template <class Dot>
bool activations_fit(const float* x, const void* q8) {
  if constexpr (Dot::kTakesQ8) {
    return q8 != nullptr && aligned16(q8);
  } else {
    return x != nullptr;
  }
}

// Rows per block: one for a single token; two from two on, reading each slice of x for both.
template <int kMaxN>
constexpr int rows_per_block() {
  return kMaxN == 1 ? 1 : 2;
}

template <class Dot, int kMaxN>
cudaError_t launch_rows(const MatvecArgs& a, cudaStream_t stream) {
  constexpr int kRows = rows_per_block<kMaxN>();
  return launch_kernel(matvec_rows<Dot, kMaxN, kRows>, dim3(blocks_for(a.rows, kRows)), dim3(kThreads), 0, stream, a);
}

}  // namespace

bool matvec_supports(kernels::GgmlType type) {
  return with_weight_block(type, [](auto) { return cudaSuccess; }) == cudaSuccess;
}

bool matvec_takes_q8(kernels::GgmlType type, int64_t cols) {
  return is_quantized(type) && cols > 0 && cols % block_values(type) == 0;
}

int64_t q8_activation_bytes(int64_t rows, int64_t cols) { return rows * q8_row_bytes(cols); }

cudaError_t launch_quantize_q8(const float* x, int64_t rows, int64_t cols, void* q8, cudaStream_t stream) {
  if (cols % 32 != 0 || !aligned16(x) || !aligned16(q8)) return cudaErrorInvalidValue;
  if (rows == 0 || cols == 0) return cudaSuccess;
  return launch_kernel(quantize_q8_rows, dim3(blocks_for(rows * cols / 4, kThreads)), dim3(kThreads), 0, stream, x,
                       rows, cols, static_cast<uint8_t*>(q8));
}

cudaError_t launch_matvec(const DeviceWeight& w, const float* x, const void* q8, int64_t n, float* y, int64_t y_stride,
                          cudaStream_t stream) {
  if (n < 0 || n > kMaxMatvecRows) return cudaErrorInvalidValue;
  if (n == 0 || w.rows == 0) return cudaSuccess;
  const MatvecArgs a{
      w.data, w.rows,   w.row_bytes,         w.matrix_bytes, w.n_mats, w.cols, x,    static_cast<const uint8_t*>(q8),
      y,      y_stride, static_cast<int>(n), nullptr,        0,        0,      false};
  return with_dot(w, x, [&](auto dot) {
    using Dot = decltype(dot);
    if (!activations_fit<Dot>(x, q8)) return cudaErrorInvalidValue;
    if (n == 1) return launch_rows<Dot, 1>(a, stream);
    if (n == 2) return launch_rows<Dot, 2>(a, stream);
    if (n <= 4) return launch_rows<Dot, 4>(a, stream);
    return launch_rows<Dot, 8>(a, stream);
  });
}

cudaError_t launch_matvec_experts(const DeviceWeight& w, const float* x, const void* q8, bool x_per_pair,
                                  const int32_t* ids, int64_t n_tokens, int64_t k, float* y, cudaStream_t stream) {
  if (n_tokens < 0 || k < 0) return cudaErrorInvalidValue;
  const int64_t pairs = n_tokens * k;
  if (pairs == 0 || w.rows == 0) return cudaSuccess;
  const MatvecArgs a{
      w.data, w.rows, w.row_bytes, w.matrix_bytes, w.n_mats,  w.cols, x, static_cast<const uint8_t*>(q8), y, w.rows,
      1,      ids,    k,           pairs,          x_per_pair};
  return with_dot(w, x, [&](auto dot) {
    using Dot = decltype(dot);
    if (!activations_fit<Dot>(x, q8)) return cudaErrorInvalidValue;
    constexpr int kRows = rows_per_block<1>();
    const dim3 grid(blocks_for(w.rows, kRows), static_cast<unsigned>(pairs < kMaxGridY ? pairs : kMaxGridY));
    return launch_kernel(matvec_expert_rows<Dot, kRows>, grid, dim3(kThreads), 0, stream, a);
  });
}

}  // namespace inferscope::cuda_kernels
