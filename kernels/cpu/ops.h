// Element-wise and per-row operations of the transformer forward pass (CPU).
// All buffers are F32 unless stated; n is a length in elements.
#pragma once

#include <cstdint>

#include "kernels/formats/rope_params.h"

namespace inferscope::kernels {

// y[i] = x[i] / sqrt(mean(x^2) + eps) * w[i]. x and y may alias.
void rms_norm(const float* x, const float* w, float* y, int64_t n, float eps);

// y[i] = (x[i] - mean(x)) / sqrt(var(x) + eps) * w[i] + b[i] (LayerNorm, BERT), the mean and
// the (biased) variance over the n values. x and y may alias.
void layer_norm(const float* x, const float* w, const float* b, float* y, int64_t n, float eps);

// Cosines and sines of one position for n_rot/2 pairs, as RopeParams describes.
void rope_angles(int64_t pos, int64_t n_rot, const RopeParams& params, float* cos_out, float* sin_out);

// The plain form (GGUF-FORMATS.md 7.3): theta starts at pos, multiplied by
// freq_base^(-2/n_rot) per pair, then scaled by freq_scale.
void rope_angles(int64_t pos, int64_t n_rot, float freq_base, float freq_scale, float* cos_out, float* sin_out);

// YaRN's correction range [low, high] in pair indices (llama.cpp's ggml_rope_yarn_corr_dims):
// the pairs that turn beta_fast resp. beta_slow times over the original context, floored /
// ceiled and clamped to [0, n_rot - 1].
void rope_yarn_corr_dims(int64_t n_rot, int64_t n_ctx_orig, float freq_base, float beta_fast, float beta_slow,
                         float* low, float* high);

// Rotates the first n_rot components of each of n_heads head vectors (head_dim apart) in place.
// neox: pairs (i, i + n_rot/2); otherwise adjacent pairs (2i, 2i+1).
void rope_apply(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cos_v, const float* sin_v,
                bool neox);

// gate[i] = silu(gate[i]) * up[i]  (SwiGLU).
void swiglu(float* gate, const float* up, int64_t n);

// gate[i] = gelu(gate[i]) * up[i]  (GeGLU, Gemma), with gelu's tanh approximation
// gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as Gemma and llama.cpp use.
void geglu(float* gate, const float* up, int64_t n);

// gpt-oss's clamped SwiGLU: g = min(gate[i], limit), u = clamp(up[i], -limit, limit),
// gate[i] = g * sigmoid(alpha g) * (u + 1), with alpha = kSwigluOaiAlpha, limit = kSwigluOaiLimit.
constexpr float kSwigluOaiAlpha = 1.702f;
constexpr float kSwigluOaiLimit = 7.0f;
void swiglu_oai(float* gate, const float* up, int64_t n);

// gate[i] = sigmoid(gate[i]) * up[i]: an output gate (Qwen3.5's gated attention).
void sigmoid_gate(float* gate, const float* up, int64_t n);

// x[i] = gelu(x[i]) (the tanh approximation above): BERT's FFN activation.
void gelu(float* x, int64_t n);

// x[i] = cap * tanh(x[i] / cap): Gemma 2's soft-capping of attention scores and logits.
// Precondition: cap > 0.
void softcap(float* x, int64_t n, float cap);

// y[i] += x[i] * scale.
void add_scaled(float* y, const float* x, int64_t n, float scale);

// y[i] += x[i].
void add(float* y, const float* x, int64_t n);

// In-place softmax of n values; x sums to 1 afterwards. Uses a polynomial exp (relative error
// ~2e-7) where SIMD is available.
void softmax(float* x, int64_t n);
// The same with the C library's exp, for decisions that must not move: expert routing.
void softmax_exact(float* x, int64_t n);
// softmax over x and one more logit `sink` that takes a share of the sum but no output (gpt-oss's
// learned attention sinks): x[i] = exp(x[i] - m) / (sum_j exp(x[j] - m) + exp(sink - m)),
// m = max(max x, sink). The C library's exp.
void softmax_with_sink(float* x, int64_t n, float sink);

// Mixture-of-experts routing of one token: logits[n_expert] becomes its softmax (in place,
// softmax_exact), and the k most probable experts (descending; ties: lower index) go to
// ids[k], their probabilities to weights[k] (divided by the sum of the k when renormalize).
// order: scratch of n_expert ints. Preconditions: 1 <= k <= n_expert.
void moe_top_k(float* logits, int64_t n_expert, int64_t k, bool renormalize, int32_t* order, int32_t* ids,
               float* weights);

// F32 -> F16 for n values (KV cache writes).
void to_fp16(const float* x, uint16_t* y, int64_t n);

}  // namespace inferscope::kernels
