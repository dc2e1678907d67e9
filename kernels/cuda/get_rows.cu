// Embedding lookups (matvec.h: launch_get_rows): table rows picked by id, decoded exactly as
// kernels::dequantize_row (weight_blocks.cuh) and scaled by one F32 multiply. Each thread
// decodes 8 values of a block type (two 16-byte stores) or 1 of a float type.
#include "kernels/cuda/launch.h"
#include "kernels/cuda/matvec.h"
#include "kernels/cuda/weight_blocks.cuh"

namespace inferscope::cuda_kernels {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 1 << 16;  // more work: the threads loop

// out[i][c] = table[ids[i]][c] * scale for i < n, c < cols (zeros for an id outside
// [0, table_rows)). vector_store: out is 16-byte aligned (and cols % 8 == 0).
template <class Block>
__global__ void __launch_bounds__(kThreads)
    gather_rows(const uint8_t* __restrict__ table, int64_t table_rows, int64_t row_bytes, int64_t cols,
                const int32_t* __restrict__ ids, int64_t n, float scale, float* __restrict__ out, bool vector_store) {
  constexpr int kUnit = decode_unit<Block>();
  const int64_t units_per_row = cols / kUnit, units = n * units_per_row;
  for (int64_t u = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; u < units;
       u += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = u / units_per_row, unit = u % units_per_row;
    const int32_t id = ids[i];
    float v[kUnit] = {};
    if (id >= 0 && id < table_rows) {
      decode_unit_of_row<Block>(table + id * row_bytes, unit, v);
#pragma unroll
      for (int k = 0; k < kUnit; ++k) v[k] = __fmul_rn(v[k], scale);
    }
    float* dst = out + i * cols + unit * kUnit;
    if constexpr (kUnit == 8) {
      if (vector_store) {
        reinterpret_cast<float4*>(dst)[0] = make_float4(v[0], v[1], v[2], v[3]);
        reinterpret_cast<float4*>(dst)[1] = make_float4(v[4], v[5], v[6], v[7]);
        continue;
      }
    }
#pragma unroll
    for (int k = 0; k < kUnit; ++k) dst[k] = v[k];
  }
}

}  // namespace

cudaError_t launch_get_rows(const DeviceWeight& table, const int32_t* ids, int64_t n, float scale, float* out,
                            cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0 || table.cols == 0) return cudaSuccess;
  return with_weight_block(table.type, [&](auto block) {
    using Block = decltype(block);
    if (!rows_fit_block<Block>(table.data, table.cols, table.row_bytes, table.matrix_bytes)) {
      return cudaErrorInvalidValue;
    }
    const int64_t units = n * table.cols / decode_unit<Block>();
    const int64_t blocks = (units + kThreads - 1) / kThreads;
    const bool vector_store = reinterpret_cast<uintptr_t>(out) % 16 == 0;
    return launch_kernel(gather_rows<Block>, dim3(static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks)),
                         dim3(kThreads), 0, stream, table.data, table.rows, table.row_bytes, table.cols, ids, n, scale,
                         out, vector_store);
  });
}

}  // namespace inferscope::cuda_kernels
