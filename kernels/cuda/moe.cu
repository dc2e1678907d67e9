#include "kernels/cuda/moe.h"

#include <cmath>

#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/launch.h"

namespace inferscope::cuda_kernels {
namespace {

constexpr unsigned kFullWarp = 0xffffffffu;
constexpr int kCombineThreads = 256;

// The top-k order of kernels::moe_top_k: higher probability first, then the lower expert index.
__device__ __forceinline__ bool ranks_before(float p_a, int a, float p_b, int b) {
  return p_a > p_b || (p_a == p_b && a < b);
}

// One warp per token. The softmax is softmax_exact's: the exponentials (expf) summed in double
// in expert order by lane 0 (a serial sum keeps the CPU's rounding, so equal probabilities stay
// equal and the ids match exactly), then k rounds of a warp arg-max under ranks_before. Lane e % 32
// owns expert e, and bit e / 32 of its `taken` marks it chosen (n_expert <= 1024).
// Dynamic shared memory: n_expert floats.
__global__ void moe_route_tokens(const float* __restrict__ logits, int n_expert, int k, bool renormalize,
                                 int32_t* __restrict__ ids, float* __restrict__ weights) {
  INFERSCOPE_DYNAMIC_SHARED(float, probs);
  const int lane = threadIdx.x;
  const int64_t token = blockIdx.x;
  const float* x = logits + token * n_expert;

  float max_logit = -INFINITY;
  for (int e = lane; e < n_expert; e += warpSize) max_logit = fmaxf(max_logit, x[e]);
  max_logit = warp_max(max_logit);
  for (int e = lane; e < n_expert; e += warpSize) probs[e] = expf(x[e] - max_logit);
  __syncwarp();
  float inv_sum = 0.0f;
  if (lane == 0) {
    double sum = 0.0;
    for (int e = 0; e < n_expert; ++e) sum += probs[e];
    inv_sum = static_cast<float>(1.0 / sum);
  }
  inv_sum = __shfl_sync(kFullWarp, inv_sum, 0);

  unsigned taken = 0;
  float chosen_sum = 0.0f, my_p = 0.0f;
  int my_id = 0;
  for (int j = 0; j < k; ++j) {
    float best_p = -1.0f;  // below every probability
    int best = n_expert;
    for (int e = lane, slot = 0; e < n_expert; e += warpSize, ++slot) {
      const float p = probs[e] * inv_sum;
      if (!((taken >> slot) & 1u) && ranks_before(p, e, best_p, best)) {
        best_p = p;
        best = e;
      }
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      const float other_p = __shfl_xor_sync(kFullWarp, best_p, offset);
      const int other = __shfl_xor_sync(kFullWarp, best, offset);
      if (ranks_before(other_p, other, best_p, best)) {
        best_p = other_p;
        best = other;
      }
    }
    if (best % warpSize == lane) taken |= 1u << (best / warpSize);
    if (j == lane) {
      my_p = best_p;
      my_id = best;
    }
    chosen_sum += best_p;
  }
  if (lane < k) {
    ids[token * k + lane] = my_id;
    weights[token * k + lane] = renormalize ? my_p / chosen_sum : my_p;
  }
}

// One block per token. Threads j < k place choice j at its rank by (expert id, j), so the sum
// runs in ascending expert id; each term is one rounded product and one rounded sum, as the
// CPU's add_scaled into a zeroed row.
__global__ void moe_combine_tokens(const float* __restrict__ y, const int32_t* __restrict__ ids,
                                   const float* __restrict__ weights, int64_t n_embd, int k,
                                   const float* __restrict__ shared_out, const float* __restrict__ shared_gate,
                                   const float* __restrict__ h, float* __restrict__ out) {
  __shared__ int order[kMaxExpertsUsed];  // choice j of each rank
  __shared__ float order_weight[kMaxExpertsUsed];
  __shared__ float scratch[32];
  const int64_t token = blockIdx.x;
  const int32_t* token_ids = ids + token * k;
  if (static_cast<int>(threadIdx.x) < k) {
    const int j = threadIdx.x;
    int rank = 0;
    for (int m = 0; m < k; ++m) rank += token_ids[m] < token_ids[j] || (token_ids[m] == token_ids[j] && m < j);
    order[rank] = j;
    order_weight[rank] = weights[token * k + j];
  }
  float gate = 0.0f;
  if (shared_out) {
    float dot = 0.0f;
    for (int64_t i = threadIdx.x; i < n_embd; i += blockDim.x) dot += shared_gate[i] * h[token * n_embd + i];
    gate = 1.0f / (1.0f + expf(-block_sum(dot, scratch)));
  }
  __syncthreads();  // order and order_weight

  const float* rows = y + token * k * n_embd;
  for (int64_t i = threadIdx.x; i < n_embd; i += blockDim.x) {
    float acc = 0.0f;
    for (int n = 0; n < k; ++n) acc = __fadd_rn(acc, __fmul_rn(rows[order[n] * n_embd + i], order_weight[n]));
    if (shared_out) acc = __fadd_rn(acc, __fmul_rn(shared_out[token * n_embd + i], gate));
    out[token * n_embd + i] = acc;
  }
}

}  // namespace

cudaError_t launch_moe_route(const float* logits, int64_t n_tokens, int64_t n_expert, int64_t k, bool renormalize,
                             int32_t* ids, float* weights, cudaStream_t stream) {
  if (n_tokens == 0) return cudaSuccess;
  return launch_kernel(moe_route_tokens, dim3(static_cast<unsigned>(n_tokens)), dim3(32), n_expert * sizeof(float),
                       stream, logits, static_cast<int>(n_expert), static_cast<int>(k), renormalize, ids, weights);
}

cudaError_t launch_moe_combine(const float* y, const int32_t* ids, const float* weights, int64_t n_tokens,
                               int64_t n_embd, int64_t k, const float* shared_out, const float* shared_gate,
                               const float* h, float* out, cudaStream_t stream) {
  if (n_tokens == 0) return cudaSuccess;
  return launch_kernel(moe_combine_tokens, dim3(static_cast<unsigned>(n_tokens)), dim3(kCombineThreads), 0, stream,
                       y, ids, weights, n_embd, static_cast<int>(k), shared_out, shared_gate, h, out);
}

}  // namespace inferscope::cuda_kernels
