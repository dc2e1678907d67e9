// Mixture-of-experts routing and output combination on CUDA (moe.cu): the non-matmul parts of
// the MoE FFN (the experts' products are launch_matvec_experts, matvec.h).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace inferscope::cuda_kernels {

constexpr int64_t kMaxExpertsUsed = 32;

// Per token t < n_tokens: the softmax of logits[t] ([n_tokens][n_expert] F32) as
// kernels::moe_top_k computes it (the C library's exp: expf), the k most probable experts in
// descending probability (ties: lower index first) into ids ([n_tokens][k] int32) and their
// probabilities into weights ([n_tokens][k] F32), divided by the sum of the k when renormalize.
// Preconditions: 1 <= k <= min(n_expert, kMaxExpertsUsed), n_expert <= 1024.
cudaError_t launch_moe_route(const float* logits, int64_t n_tokens, int64_t n_expert, int64_t k, bool renormalize,
                             int32_t* ids, float* weights, cudaStream_t stream);

// out[t][:] = sum_j weights[t][j] * y[t * k + j][:], the terms added in ascending expert id (as
// the CPU adds them); with shared_out: out[t][:] += sigmoid(shared_gate . h[t]) * shared_out[t][:]
// (qwen2moe's shared expert; shared_gate [n_embd], h and shared_out [n_tokens][n_embd]).
// y: [n_tokens * k][n_embd]; out: [n_tokens][n_embd], distinct from the inputs.
cudaError_t launch_moe_combine(const float* y, const int32_t* ids, const float* weights, int64_t n_tokens,
                               int64_t n_embd, int64_t k, const float* shared_out, const float* shared_gate,
                               const float* h, float* out, cudaStream_t stream);

}  // namespace inferscope::cuda_kernels
