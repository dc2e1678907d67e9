// Weight rows decoded to F16 / BF16 tiles for the cuBLAS products of prefill, and F32
// activations narrowed for them (matvec.h: launch_dequantize_rows, launch_convert). Each thread
// decodes 8 values of a block type (one 16-byte store) or 1 of a float type, exactly as
// kernels::dequantize_row (weight_blocks.cuh), then rounds to nearest even.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/matvec.h"
#include "kernels/cuda/weight_blocks.cuh"

namespace inferscope::cuda_kernels {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 1 << 16;  // more work: the threads loop

template <TileType kOut>
__device__ __forceinline__ uint32_t round_to_tile(float v) {
  if constexpr (kOut == TileType::F16) {
    return __half_as_ushort(__float2half_rn(v));
  } else {
    return __bfloat16_as_ushort(__float2bfloat16_rn(v));
  }
}

// dst[i][c] = rows[i][c] rounded to kOut for i < n_rows, c < cols; rows of row_bytes bytes.
// vector_store: dst is 16-byte aligned (and cols % 8 == 0, as every block type's is).
template <class Block, TileType kOut>
__global__ void __launch_bounds__(kThreads)
    dequantize_tile(const uint8_t* __restrict__ rows, int64_t row_bytes, int64_t cols, int64_t n_rows,
                    uint16_t* __restrict__ dst, bool vector_store) {
  constexpr int kUnit = decode_unit<Block>();
  const int64_t units_per_row = cols / kUnit, units = n_rows * units_per_row;
  for (int64_t u = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; u < units;
       u += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = u / units_per_row, unit = u % units_per_row;
    float v[kUnit];
    decode_unit_of_row<Block>(rows + row * row_bytes, unit, v);
    uint16_t* out = dst + row * cols + unit * kUnit;
    if constexpr (kUnit == 8) {
      uint32_t packed[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) packed[i] = round_to_tile<kOut>(v[2 * i]) | (round_to_tile<kOut>(v[2 * i + 1]) << 16);
      if (vector_store) {
        *reinterpret_cast<uint4*>(out) = uint4{packed[0], packed[1], packed[2], packed[3]};
        continue;
      }
    }
#pragma unroll
    for (int i = 0; i < kUnit; ++i) out[i] = static_cast<uint16_t>(round_to_tile<kOut>(v[i]));
  }
}

template <TileType kOut>
__global__ void __launch_bounds__(kThreads)
    convert_values(const float* __restrict__ x, int64_t count, uint16_t* __restrict__ dst) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    dst[i] = static_cast<uint16_t>(round_to_tile<kOut>(x[i]));
  }
}

dim3 grid_for(int64_t items) {
  const int64_t blocks = (items + kThreads - 1) / kThreads;
  return dim3(static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks));
}

}  // namespace

cudaError_t launch_dequantize_rows(const DeviceWeight& w, int64_t mat, int64_t row0, int64_t rows, TileType out,
                                   void* dst, cudaStream_t stream) {
  if (mat < 0 || mat >= w.n_mats || row0 < 0 || rows < 0 || row0 + rows > w.rows) return cudaErrorInvalidValue;
  if (rows == 0 || w.cols == 0) return cudaSuccess;
  return with_weight_block(w.type, [&](auto block) {
    using Block = decltype(block);
    if (!rows_fit_block<Block>(w.data, w.cols, w.row_bytes, w.matrix_bytes)) return cudaErrorInvalidValue;
    const uint8_t* first = w.data + mat * w.matrix_bytes + row0 * w.row_bytes;
    const bool vector_store = reinterpret_cast<uintptr_t>(dst) % 16 == 0;
    const dim3 grid = grid_for(rows * w.cols / decode_unit<Block>());
    auto* tile = static_cast<uint16_t*>(dst);
    if (out == TileType::F16) {
      return launch_kernel(dequantize_tile<Block, TileType::F16>, grid, dim3(kThreads), 0, stream, first, w.row_bytes,
                           w.cols, rows, tile, vector_store);
    }
    return launch_kernel(dequantize_tile<Block, TileType::BF16>, grid, dim3(kThreads), 0, stream, first, w.row_bytes,
                         w.cols, rows, tile, vector_store);
  });
}

cudaError_t launch_convert(const float* x, int64_t count, TileType out, void* dst, cudaStream_t stream) {
  if (count < 0) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  auto* values = static_cast<uint16_t*>(dst);
  if (out == TileType::F16) {
    return launch_kernel(convert_values<TileType::F16>, grid_for(count), dim3(kThreads), 0, stream, x, count, values);
  }
  return launch_kernel(convert_values<TileType::BF16>, grid_for(count), dim3(kThreads), 0, stream, x, count, values);
}

}  // namespace inferscope::cuda_kernels
