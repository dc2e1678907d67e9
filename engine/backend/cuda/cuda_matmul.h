// The matrix products of the CUDA backend: one input multiplied by one or more weight matrices.
// Up to kMaxMatvecRows rows (decode) run the fused dequantizing GEMV (kernels/cuda/matvec.h),
// the input quantized to int8 once for every product whose type multiplies in int8. More rows
// (prefill) run cuBLAS on tensor cores with F32 accumulation: F16 weights as they are with the
// input rounded to F16; BF16 weights with it in BF16; F32 weights in F32; the quantized types
// dequantized to BF16 in tiles of rows (launch_dequantize_rows) with the input in BF16.
// A batch-invariant product (RowBatching::Invariant) runs the GEMV whatever n, kMaxMatvecRows
// rows at a time: the kernel sums each row the same way for any count of rows up to that, so
// every row gets the bits of a product of that row alone (a decode step's).
#pragma once

#include <cstdint>
#include <span>

#include "engine/backend/cuda/cuda_context.h"
#include "engine/backend/cuda/cuda_memory.h"
#include "engine/core/status.h"
#include "kernels/cuda/matvec.h"

namespace inferscope::cuda {

// One product of a shared input: y ([n][y_stride] F32, columns [0, w.rows) written).
struct MatmulTarget {
  cuda_kernels::DeviceWeight w;
  float* y = nullptr;
  int64_t y_stride = 0;
};

// How the products of a plan run, chosen on the host (tests check the choice).
enum class MatmulPath { Matvec, MatvecInt8, CublasF32, CublasF16, CublasBF16, CublasDequantizedBF16 };
// Fastest: the path for n rows as matmul_path says. Invariant: every row as in a product of
// that row alone (Chunk::batch_invariant; MoE routers, whose expert choices must not hang on how
// a prompt was split into chunks, nor on F16-rounded inputs).
enum class RowBatching { Fastest, Invariant };
MatmulPath matmul_path(kernels::GgmlType type, int64_t cols, int64_t n, RowBatching batching = RowBatching::Fastest);
const char* matmul_path_name(MatmulPath path);

// Rows of weights one dequantized tile holds: all of them up to kTileBytes, else a multiple of 128.
constexpr uint64_t kTileBytes = 64ull << 20;
int64_t dequantize_tile_rows(int64_t rows, int64_t cols);
// Bytes of the tile a matrix of this type and shape needs when multiplied by more than
// kMaxMatvecRows rows (0 for the float types, which cuBLAS reads as they are).
uint64_t tile_bytes_for(kernels::GgmlType type, int64_t rows, int64_t cols);

class MatmulRunner {
 public:
  // Scratch for inputs of up to max_rows rows of max_cols values (int8 and F16/BF16 copies) and
  // for a dequantized tile of tile_bytes (tile_bytes_for of the model's matrices).
  static Result<MatmulRunner> create(DeviceMemory& memory, int64_t max_rows, int64_t max_cols, uint64_t tile_bytes);

  // y_i = x w_i^T for every target, x: [n][cols] F32 (the targets' cols are equal). The input
  // is quantized to int8 once for all n rows (per row: the same codes for any n).
  Status run(const CudaContext& ctx, std::span<const MatmulTarget> targets, const float* x, int64_t n,
             RowBatching batching);
  // The int8 copy of x ([n][cols]) that launch_matvec_experts reads, or null when `type` does
  // not multiply in int8.
  Result<const void*> quantize_for_experts(const CudaContext& ctx, kernels::GgmlType type, const float* x, int64_t rows,
                                           int64_t cols);
  uint64_t bytes() const { return q8_.bytes() + input_.bytes() + tile_.bytes(); }

 private:
  Status run_cublas(const CudaContext& ctx, const MatmulTarget& t, MatmulPath path, const float* x, int64_t n);
  Result<const void*> converted_input(const CudaContext& ctx, cuda_kernels::TileType type, const float* x, int64_t count);

  int64_t max_rows_ = 0, max_cols_ = 0;
  DeviceBlock q8_, input_, tile_;
  // What input_ holds within one run() (an input converted once serves every target).
  const float* input_source_ = nullptr;
  int input_type_ = -1;
};

}  // namespace inferscope::cuda
