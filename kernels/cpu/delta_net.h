// Gated DeltaNet (Qwen3.5, Qwen3-Next): the short causal convolution and the delta-rule
// recurrence of linear attention, per sequence and head, F32. For one value head with state S
// ([d values][d keys], row j = value j), each token t:
//   S = exp(g_t) S;   u = beta_t (v_t - S k_t);   S += u k_t^T;   o_t = S q_t
// (q, k l2-normalized, q also scaled by 1/sqrt(d); g_t < 0 the decay in log space, beta_t in
// (0, 1)). delta_net_steps runs it token by token (decode); delta_net_chunks runs blocks of
// kDeltaNetChunk tokens in the chunked form: within a block the updates u solve a triangular
// system, and the block's outputs and its end state are matrix products (prompts). The two agree
// within float rounding.
#pragma once

#include <cstdint>

namespace inferscope::kernels {

// Tokens per block of the chunked form.
constexpr int64_t kDeltaNetChunk = 64;

// x ([n][channels], in place) = silu of each channel's causal convolution over its K taps:
// x[t][c] = silu(sum_j kernel[c][j] * in[t - (K - 1) + j][c]), inputs before row 0 from `state`
// ([K - 1][channels], oldest first), which ends holding the last K - 1 inputs. Channels
// [c0, c1) only (a thread's share).
void causal_conv_silu(float* x, int64_t n, int64_t channels, const float* kernel, int64_t K, float* state, int64_t c0,
                      int64_t c1);

// The raw per-head inputs of n tokens made ready for the recurrence, in place: q and k heads
// ([n_k_heads][d] at q_row[t], k_row[t], rows `stride` floats apart) l2-normalized (x /
// max(|x|, eps)), q then scaled by 1/sqrt(d); alpha[t][h] (rows of n_v_heads) becomes the decay
// g = softplus(alpha + dt[h]) * a[h]; beta[t][h] becomes sigmoid(beta).
void delta_net_prepare(float* q, float* k, int64_t stride, int64_t n_k_heads, int64_t d, float* alpha, float* beta,
                       int64_t n_v_heads, const float* dt, const float* a, int64_t n, float eps);

// One value head's rows: token t's q, k, v at q + t * stride (and k, v likewise), its decay and
// update at g[t * gb_stride], beta[t * gb_stride], its output to out + t * out_stride.
struct DeltaNetHeadRows {
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  int64_t stride = 0;
  const float* g = nullptr;
  const float* beta = nullptr;
  int64_t gb_stride = 0;
  float* out = nullptr;
  int64_t out_stride = 0;
};

// n tokens, one at a time; state: [d][d], updated.
void delta_net_steps(const DeltaNetHeadRows& rows, int64_t n, int64_t d, float* state);

// The same result in blocks of kDeltaNetChunk tokens. scratch: delta_net_chunk_scratch(d) floats.
void delta_net_chunks(const DeltaNetHeadRows& rows, int64_t n, int64_t d, float* state, float* scratch);
int64_t delta_net_chunk_scratch(int64_t d);

}  // namespace inferscope::kernels
