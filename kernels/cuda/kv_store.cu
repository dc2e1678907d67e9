// launch_kv_store (attention.h): one thread block per (row, K or V), its threads encoding the
// row's value pairs (F16) or 32-value blocks (quantized) into the row's pool row.
#include "kernels/cuda/attention.h"
#include "kernels/cuda/kv_rows.cuh"
#include "kernels/cuda/launch.h"

namespace inferscope::cuda_kernels {
namespace {

constexpr int kStoreThreads = 128;

// blockIdx.x: the row; blockIdx.y: 0 writes its K row, 1 its V row.
__global__ void __launch_bounds__(kStoreThreads)
    kv_store_rows(const float* k, const float* v, KvPool k_pool, KvPool v_pool, int n_embd_kv, ChunkRows chunk) {
  __shared__ float nf4[kNf4LevelCount];
  kv_load_nf4_levels(nf4);
  __syncthreads();
  const int r = blockIdx.x;
  const KvPool& pool = blockIdx.y == 0 ? k_pool : v_pool;
  const float* x = (blockIdx.y == 0 ? k : v) + static_cast<int64_t>(r) * n_embd_kv;
  const int64_t row = kv_pool_row(chunk.tables + chunk.table[r], chunk.pos[r], pool.block_shift);
  kv_encode_row(pool.type, x, pool.data + row * pool.row_bytes, n_embd_kv, nf4);
}

}  // namespace

cudaError_t launch_kv_store(const float* k, const float* v, const KvPool& k_pool, const KvPool& v_pool,
                            int64_t n_embd_kv, const ChunkRows& chunk, int64_t rows, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  if (n_embd_kv % kv_granule(k_pool.type) != 0 || n_embd_kv % kv_granule(v_pool.type) != 0) {
    return cudaErrorInvalidValue;
  }
  return launch_kernel(kv_store_rows, dim3(static_cast<unsigned>(rows), 2), dim3(kStoreThreads), 0, stream, k, v,
                       k_pool, v_pool, static_cast<int>(n_embd_kv), chunk);
}

}  // namespace inferscope::cuda_kernels
