#include "engine/backend/cuda/cuda_matmul.h"

#include <algorithm>

#include "engine/backend/cuda/cuda_error.h"

namespace inferscope::cuda {
namespace {

using kernels::GgmlType;
namespace ck = cuda_kernels;

constexpr int64_t kTileRowMultiple = 128;

// cuBLAS is column-major: a row-major [rows][cols] matrix is its cols x rows transpose, so
// y^T (rows x n, ldc = y_stride) = W (op T of the stored cols x rows) . x^T (cols x n).
Status gemm(const CudaContext& ctx, const void* w, cudaDataType w_type, int64_t lda, int64_t rows, const void* x,
            cudaDataType x_type, int64_t cols, int64_t n, float* y, int64_t y_stride) {
  const float one = 1.0f, zero = 0.0f;
  return cublas_status(cublasGemmEx(ctx.cublas(), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(rows), static_cast<int>(n),
                                    static_cast<int>(cols), &one, w, w_type, static_cast<int>(lda), x, x_type,
                                    static_cast<int>(cols), &zero, y, CUDA_R_32F, static_cast<int>(y_stride),
                                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                       "cublasGemmEx");
}

}  // namespace

MatmulPath matmul_path(GgmlType type, int64_t cols, int64_t n, RowBatching batching) {
  if (n <= ck::kMaxMatvecRows || batching == RowBatching::Invariant) {
    return ck::matvec_takes_q8(type, cols) ? MatmulPath::MatvecInt8 : MatmulPath::Matvec;
  }
  switch (type) {
    case GgmlType::F32: return MatmulPath::CublasF32;
    case GgmlType::F16: return MatmulPath::CublasF16;
    case GgmlType::BF16: return MatmulPath::CublasBF16;
    default: return MatmulPath::CublasDequantizedBF16;
  }
}

const char* matmul_path_name(MatmulPath path) {
  switch (path) {
    case MatmulPath::Matvec: return "matvec";
    case MatmulPath::MatvecInt8: return "matvec int8 (dp4a)";
    case MatmulPath::CublasF32: return "cuBLAS F32";
    case MatmulPath::CublasF16: return "cuBLAS F16 (tensor cores)";
    case MatmulPath::CublasBF16: return "cuBLAS BF16 (tensor cores)";
    case MatmulPath::CublasDequantizedBF16: return "dequantize to BF16 + cuBLAS (tensor cores)";
  }
  return "?";
}

int64_t dequantize_tile_rows(int64_t rows, int64_t cols) {
  const auto fit = static_cast<int64_t>(kTileBytes / (static_cast<uint64_t>(std::max<int64_t>(cols, 1)) * 2));
  if (rows <= fit) return rows;
  return std::max(kTileRowMultiple, fit / kTileRowMultiple * kTileRowMultiple);
}

uint64_t tile_bytes_for(GgmlType type, int64_t rows, int64_t cols) {
  if (matmul_path(type, cols, ck::kMaxMatvecRows + 1) != MatmulPath::CublasDequantizedBF16) return 0;
  return static_cast<uint64_t>(dequantize_tile_rows(rows, cols) * cols) * 2;
}

Result<MatmulRunner> MatmulRunner::create(DeviceMemory& memory, int64_t max_rows, int64_t max_cols,
                                          uint64_t tile_bytes) {
  MatmulRunner r;
  r.max_rows_ = std::max<int64_t>(1, max_rows);
  r.max_cols_ = std::max<int64_t>(32, (max_cols + 31) / 32 * 32);
  auto q8 = memory.allocate(static_cast<uint64_t>(ck::q8_activation_bytes(r.max_rows_, r.max_cols_)), MemoryUse::Scratch,
                            "int8 activations");
  if (!q8) return q8.status();
  r.q8_ = std::move(*q8);
  if (r.max_rows_ > ck::kMaxMatvecRows) {
    auto input = memory.allocate(static_cast<uint64_t>(r.max_rows_ * r.max_cols_) * 2, MemoryUse::Scratch,
                                 "F16/BF16 activations");
    if (!input) return input.status();
    r.input_ = std::move(*input);
  }
  if (r.max_rows_ > ck::kMaxMatvecRows && tile_bytes > 0) {
    auto tile = memory.allocate(tile_bytes, MemoryUse::Scratch, "dequantized weight tile");
    if (!tile) return tile.status();
    r.tile_ = std::move(*tile);
  }
  return r;
}

Result<const void*> MatmulRunner::converted_input(const CudaContext& ctx, ck::TileType type, const float* x,
                                                  int64_t count) {
  if (input_source_ != x || input_type_ != static_cast<int>(type)) {
    INFERSCOPE_RETURN_IF_ERROR(cuda_status(ck::launch_convert(x, count, type, input_.get(), ctx.stream()), "convert"));
    input_source_ = x;
    input_type_ = static_cast<int>(type);
  }
  return static_cast<const void*>(input_.get());
}

Status MatmulRunner::run_cublas(const CudaContext& ctx, const MatmulTarget& t, MatmulPath path, const float* x,
                                int64_t n) {
  const ck::DeviceWeight& w = t.w;
  if (path == MatmulPath::CublasF32) {
    return gemm(ctx, w.data, CUDA_R_32F, w.row_bytes / 4, w.rows, x, CUDA_R_32F, w.cols, n, t.y, t.y_stride);
  }
  const ck::TileType input_type = path == MatmulPath::CublasF16 ? ck::TileType::F16 : ck::TileType::BF16;
  auto input = converted_input(ctx, input_type, x, n * w.cols);
  if (!input) return input.status();
  if (path == MatmulPath::CublasF16 || path == MatmulPath::CublasBF16) {
    const cudaDataType type = path == MatmulPath::CublasF16 ? CUDA_R_16F : CUDA_R_16BF;
    return gemm(ctx, w.data, type, w.row_bytes / 2, w.rows, *input, type, w.cols, n, t.y, t.y_stride);
  }
  const int64_t tile_rows = dequantize_tile_rows(w.rows, w.cols);
  for (int64_t row0 = 0; row0 < w.rows; row0 += tile_rows) {
    const int64_t rows = std::min(tile_rows, w.rows - row0);
    INFERSCOPE_RETURN_IF_ERROR(cuda_status(
        ck::launch_dequantize_rows(w, 0, row0, rows, ck::TileType::BF16, tile_.get(), ctx.stream()), "dequantize_rows"));
    INFERSCOPE_RETURN_IF_ERROR(
        gemm(ctx, tile_.get(), CUDA_R_16BF, w.cols, rows, *input, CUDA_R_16BF, w.cols, n, t.y + row0, t.y_stride));
  }
  return Status::ok();
}

Status MatmulRunner::run(const CudaContext& ctx, std::span<const MatmulTarget> targets, const float* x, int64_t n,
                         RowBatching batching) {
  if (n == 0 || targets.empty()) return Status::ok();
  if (n > max_rows_) return Status::error("cuda: a product of " + std::to_string(n) + " rows (at most " +
                                          std::to_string(max_rows_) + ")");
  input_source_ = nullptr;  // the input may have changed since the last run
  bool quantized = false;
  for (const MatmulTarget& t : targets) {
    const MatmulPath path = matmul_path(t.w.type, t.w.cols, n, batching);
    if (t.w.cols > max_cols_) return Status::error("cuda: a product with rows of " + std::to_string(t.w.cols) + " values");
    if (path == MatmulPath::MatvecInt8 && !quantized) {
      INFERSCOPE_RETURN_IF_ERROR(
          cuda_status(ck::launch_quantize_q8(x, n, t.w.cols, q8_.get(), ctx.stream()), "quantize_q8"));
      quantized = true;
    }
    if (path == MatmulPath::Matvec || path == MatmulPath::MatvecInt8) {
      // Pieces start at multiples of kMaxMatvecRows rows: x stays as aligned as a single row's.
      for (int64_t row0 = 0; row0 < n; row0 += ck::kMaxMatvecRows) {
        const int64_t rows = std::min(ck::kMaxMatvecRows, n - row0);
        const void* q8 = quantized ? q8_.as<uint8_t>() + ck::q8_activation_bytes(row0, t.w.cols) : nullptr;
        INFERSCOPE_RETURN_IF_ERROR(cuda_status(ck::launch_matvec(t.w, x + row0 * t.w.cols, q8, rows,
                                                                 t.y + row0 * t.y_stride, t.y_stride, ctx.stream()),
                                               "matvec"));
      }
      continue;
    }
    if (path == MatmulPath::CublasDequantizedBF16 && !tile_.get()) {
      return Status::error("internal: no dequantization tile allocated");
    }
    INFERSCOPE_RETURN_IF_ERROR(run_cublas(ctx, t, path, x, n));
  }
  return Status::ok();
}

Result<const void*> MatmulRunner::quantize_for_experts(const CudaContext& ctx, kernels::GgmlType type, const float* x,
                                                       int64_t rows, int64_t cols) {
  if (!ck::matvec_takes_q8(type, cols)) return static_cast<const void*>(nullptr);
  if (rows > max_rows_ || cols > max_cols_) return Status::error("cuda: expert inputs beyond the int8 scratch");
  INFERSCOPE_RETURN_IF_ERROR(cuda_status(ck::launch_quantize_q8(x, rows, cols, q8_.get(), ctx.stream()), "quantize_q8"));
  return static_cast<const void*>(q8_.get());
}

}  // namespace inferscope::cuda
