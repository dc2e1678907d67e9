// The activations of a forward pass: one buffer per Act, sized once from the model for every
// backend (the CPU allocates them in host memory, Vulkan and CUDA on their device), for chunks
// of up to `batch` rows. Also the CPU backend's working memory beside them, so that the memory
// estimate (engine/model/memory_estimate.h) predicts what a session allocates.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "engine/model/model_config.h"

namespace inferscope {

// The activations the forward pass names in its ops (engine/backend/backend_ops.h). Each is
// [rows][width] F32, its rows those of the chunk (or of the chunk's (token, choice) routes).
enum class Act {
  X,          // [batch][n_embd] the residual stream
  H,          // [batch][n_embd] a normalized copy, or a block's output before the residual add
  Q,          // [batch][n_embd_q]
  K, V,       // [batch][n_embd_kv] this chunk's new keys and values
  Attn,       // [batch][max(n_embd_q, DeltaNet value_dim)] attention's (or DeltaNet's) output
  Gate,       // [batch][max(n_embd_q, value_dim)] qwen35: attention's output gate, DeltaNet's z
  Conv,       // [batch][DeltaNet channels] q, k, v before and after the convolution
  Alpha,      // [batch][DeltaNet n_v_heads] the decay's and the update's logits per value head
  Beta,
  FfnA, FfnB, // [batch][ffn width] the dense FFN's (or the shared expert's) gate and up
              // projections; FfnA also holds the GLU's output
  FfnOut,     // [batch][n_embd]
  Router,     // [batch][n_expert] router logits
  ExpertA,    // [batch * n_expert_used][n_ff_expert] a routed expert's gate projection per
  ExpertB,    //   (token, choice), and its up projection; ExpertA also holds the GLU's output
  ExpertOut,  // [batch * n_expert_used][n_embd] a routed expert's output per (token, choice)
  SharedOut,  // [batch][n_embd] the shared expert's output (qwen2moe)
  PerLayer,   // [batch][n_layer * n_embd_per_layer] gemma4's per-layer inputs, made at embedding
  PerLayerRows,  // [batch][n_layer * n_embd_per_layer] their table rows, while they are made
  // An MTP block's (ModelConfig::has_mtp, engine/model/model_weights.h MtpWeights): the hidden
  // row each of its rows pairs with (after a draft chunk, row 0 holds its output's), and its
  // input [token row | hidden row] before eh_proj.
  MtpHidden,  // [batch][n_embd]
  MtpInput,   // [batch][2 * n_embd]
  Logits,     // [batch][output_width]: logits, or the final token states
};
inline constexpr size_t kActCount = static_cast<size_t>(Act::Logits) + 1;

struct ActShape {
  int64_t rows = 0;  // 0: the model never uses it
  int64_t width = 0;
  int64_t floats() const { return rows * width; }
};

// Products sharing one input at most (BackendOps::matmul: qwen35's DeltaNet projections are
// four), each with a region for the input packed for its weight type.
inline constexpr int kPackedRegions = 4;

struct ActivationPlan {
  int64_t batch = 0;   // rows of a chunk at most
  int64_t routes = 0;  // batch * n_expert_used: the (token, choice) pairs of a MoE layer; 0 when dense
  std::array<ActShape, kActCount> acts{};
  // The CPU backend's working memory besides the activations: attention scores (floats, for
  // all threads), RoPE cos and sin tables (floats each), the rows routed to one expert gathered
  // (floats: its input and two outputs) and packed activations (kPackedRegions regions of packed_region
  // bytes).
  int64_t scores = 0, rope = 0, expert_rows = 0;
  size_t packed_region = 0;

  // output_width: floats per Logits row (n_vocab, or n_embd for token states).
  static ActivationPlan for_model(const ModelConfig& config, int64_t n_ctx, int64_t max_batch, int n_threads,
                                  int64_t output_width);

  const ActShape& operator[](Act a) const { return acts[static_cast<size_t>(a)]; }
  // The most rows a product reads (the routes of a MoE layer, else a chunk's), and the widest
  // row it reads (the residual stream, the attention output, an FFN's or an expert's hidden
  // layer): what a backend's packed or quantized product inputs need room for.
  int64_t product_rows() const { return std::max(batch, routes); }
  int64_t product_input_width() const;
  // Every activation but Logits (which the CPU writes straight to the caller's buffer).
  uint64_t activation_bytes() const;
  // What the CPU backend allocates: the activations, its working memory and the routes' ids.
  uint64_t host_bytes() const;
};

}  // namespace inferscope
