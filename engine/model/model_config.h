// Hyperparameters of a model, read from GGUF metadata (GGUF-FORMATS.md 5.2-5.3), with
// llama.cpp's key names for each architecture ("<arch>.embedding_length", ...): the llama-family
// decoders and BERT's encoder (sentence embeddings).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/gguf/gguf_file.h"
#include "engine/kv/kv_layout.h"
#include "engine/kv/recurrent_layout.h"

namespace inferscope {

enum class Architecture {
  Llama, Qwen2, Qwen2Moe, Qwen3, Qwen3Moe, Phi3, Gemma, Gemma2, Gemma3, SmolLm3, GptOss, Mistral3, Olmo2, Qwen35, Qwen35Moe, Qwen3Next, Gemma4, Bert
};

// NORM rotates adjacent pairs (2i, 2i+1); NEOX rotates (i, i + n_rot/2). Fixed per architecture.
enum class RopeLayout { Normal, Neox };

// RoPE frequency scaling (`<arch>.rope.scaling.type`). Per-dimension factor tensors are not a
// type of their own: llama.cpp's converter writes Llama 3.1's "llama3" rule as rope_freqs.weight
// with no scaling keys, and Phi-3's LongRoPE as rope_factors_long/short.weight (the weights
// bind them; ForwardPass picks long or short from the session context).
enum class RopeScaling { None, Linear, Yarn, LongRope };

// Expert routing: Mixtral renormalizes the top-k softmax weights; qwen2moe uses them as they are.
enum class ExpertGating { None, SoftmaxTopKRenormalized, SoftmaxTopK };

// The gated FFN's activation: down(act(gate x) * up x). Gemma uses gelu (tanh approximation);
// gpt-oss a clamped SwiGLU, down(g sigmoid(1.702 g) (u + 1)) with g = min(gate x, 7) and
// u = clamp(up x, -7, 7) (kernels/cpu/ops.h swiglu_oai).
// Sigmoid: a gate rather than an FFN, sigmoid(gate) * x (qwen35's gated attention output).
enum class FfnActivation { Silu, GeluTanh, SwigluOai, Sigmoid };

// How an encoder's token states become one embedding (`<arch>.pooling_type`, llama.cpp's
// numbering): the mean of the rows, the first row ([CLS]) or the last row.
enum class Pooling { None = 0, Mean = 1, Cls = 2, Last = 3 };

// How a layer rotates its queries and keys: with the model's RoPE, with the sliding-window
// layers' own (gemma3: another base, no scaling), or not at all (smollm3's every 4th layer).
enum class LayerRope { Full, SlidingWindow, None };

// A Gated DeltaNet layer's shape (qwen35: llama.cpp's ssm.* keys). Its token mixer is linear
// attention with a fixed-size state per sequence instead of KV rows per position:
//   [q k v] = silu(causal_conv(x W_qkv)),  q, k l2-normalized per head,
//   per value head h:  S_h = exp(g) S_h,  S_h += beta (v - S_h k) k^T,  o = S_h q / sqrt(head_dim)
// (S_h is [head_dim values][head_dim keys]; g = softplus(x W_alpha + dt) * a < 0 the decay,
// beta = sigmoid(x W_beta)), then rms_norm(o) * silu(x W_z) and the output projection. Value
// head h reads key head key_head(h): h % n_k_heads (qwen35: llama.cpp tiles the key heads), or
// h / (n_v_heads / n_k_heads) (qwen3next: each key head's value heads together).
struct DeltaNetShape {
  int64_t conv_kernel = 0;  // ssm.conv_kernel: the convolution's taps (4)
  int64_t n_k_heads = 0;    // ssm.group_count
  int64_t n_v_heads = 0;    // ssm.time_step_rank
  int64_t head_dim = 0;     // ssm.state_size: every key and value head's size
  bool grouped_heads = false;

  int64_t key_head(int64_t value_head) const {
    return grouped_heads ? value_head / (n_v_heads / n_k_heads) : value_head % n_k_heads;
  }
  int64_t key_dim() const { return head_dim * n_k_heads; }
  int64_t value_dim() const { return head_dim * n_v_heads; }
  // The convolved channels: q, k and v of every head.
  int64_t channels() const { return 2 * key_dim() + value_dim(); }
  // A sequence's state in one layer: the convolution's last inputs and the heads' matrices.
  int64_t conv_floats() const { return (conv_kernel - 1) * channels(); }
  int64_t matrix_floats() const { return n_v_heads * head_dim * head_dim; }
};

struct ModelConfig {
  std::string arch_name;  // general.architecture
  std::string name;       // general.name
  Architecture arch = Architecture::Llama;

  int64_t n_vocab = 0;
  int64_t n_ctx_train = 0;
  int64_t n_embd = 0;
  int64_t n_layer = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;  // key/value head size
  int64_t n_ff = 0;      // dense FFN width (or per-expert width for Mixtral-style files)

  int64_t n_expert = 0;
  int64_t n_expert_used = 0;
  int64_t n_ff_expert = 0;  // per-expert FFN width
  int64_t n_ff_shared = 0;  // shared-expert FFN width (qwen2moe), 0 when none
  ExpertGating gating = ExpertGating::None;

  float rms_eps = 1e-5f;
  float rope_freq_base = 10000.0f;
  float rope_freq_scale = 1.0f;  // 1 / rope.scaling.factor (linear and YaRN scaling)
  int64_t n_rot = 0;
  RopeLayout rope_layout = RopeLayout::Normal;
  RopeScaling rope_scaling = RopeScaling::None;
  // rope.scaling.original_context_length (n_ctx_train when absent): YaRN's correction range,
  // and LongRoPE's switch (a session context above it uses rope_factors_long).
  int64_t n_ctx_orig = 0;
  // Magnitude of RoPE's cos and sin: rope.scaling.attn_factor (phi3 LongRoPE; computed as
  // sqrt(1 + ln(s) / ln(n_ctx_orig)), s = n_ctx_train / n_ctx_orig, when a file with LongRoPE
  // factors lacks it), times YaRN's 1 + 0.1 ln(factor).
  float rope_attn_factor = 1.0f;
  // The sliding-window layers' RoPE base and scale (rope.freq_base_swa; gemma3, default 10000
  // and 1), when has_swa_rope.
  bool has_swa_rope = false;
  float rope_freq_base_swa = 10000.0f;
  float rope_freq_scale_swa = 1.0f;
  // > 0: layers il with (il + 1) % n_no_rope_step == 0 use no RoPE (smollm3: 4).
  int64_t n_no_rope_step = 0;
  // mistral3 (Ministral 3): attention.temperature_scale, queries scaled by 1 + this * ln(floor(pos /
  // n_ctx_orig) + 1); 0 = off (kernels/formats/rope_params.h q_temp_beta).
  float attn_temp_scale = 0.0f;
  float yarn_beta_fast = 32.0f;  // rope.scaling.yarn_beta_fast
  float yarn_beta_slow = 1.0f;   // rope.scaling.yarn_beta_slow

  bool has_qkv_bias = false;
  // qwen3, qwen3moe: RMSNorm of each Q and K head ([head_dim] weights) before RoPE; olmo2: of
  // all of Q and all of K at once ([n_embd_q] and [n_embd_kv] weights: qk_norm_whole).
  bool has_qk_norm = false;
  bool qk_norm_whole = false;
  // false (olmo2): no RMSNorm before attention and FFN; the blocks read the residual stream as it
  // is and normalize their outputs (has_post_norms).
  bool has_pre_norms = true;
  FfnActivation ffn_activation = FfnActivation::Silu;

  float embd_scale = 1.0f;       // token embeddings times this after lookup (gemma: sqrt(n_embd))
  float attn_scale = 0.0f;       // query scale, 1/sqrt(head_dim) unless the architecture says otherwise
  float attn_softcap = 0.0f;     // gemma2: scores -> c tanh(scores / c) before softmax; 0 = off
  float final_softcap = 0.0f;    // gemma2: the same on the output logits; 0 = off
  bool has_post_norms = false;   // gemma2: RMSNorm of the attention and FFN outputs before the residual
  int64_t n_swa = 0;             // sliding window: a token sees itself and the n_swa - 1 before; 0 = off
  // Which layers attend through the window (llama.cpp's swa pattern): 0 every layer (phi3),
  // p > 0 layers il with il % p < p - 1 (gemma2: 2, the even layers; gemma3: 6, five of six);
  // or, when window_layers is not empty, the layers it marks 1 (a per-layer pattern array).
  int64_t swa_period = 0;
  std::vector<uint8_t> window_layers;

  // gemma4: the window layers' heads are another size (attention.key_length_swa) and rotate
  // n_rot_swa of their dims (rope.dimension_count_swa); 0: as the other layers' (head_dim, n_rot).
  int64_t head_dim_swa = 0;
  int64_t n_rot_swa = 0;
  // gemma4: the rope_freqs factors apply to the full-attention layers only (its "proportional"
  // RoPE, factors of 1e30 leaving the unrotated pairs as they are).
  bool rope_freqs_full_only = false;
  // gemma4: V is RMS-normalized per head (no weight) before it is stored.
  bool has_v_norm = false;
  // gemma4 (attention.shared_kv_layers): the last n_kv_shared layers store no K and V; each
  // reads the KV of kv_layer(il), the last earlier layer of its kind (window or not).
  int64_t n_kv_shared = 0;
  // gemma4 (embedding_length_per_layer_input): each layer adds a gated projection of a
  // per-layer input of this width, made once per token from a table of its own and from the
  // scaled token embedding (DecoderGraph::per_layer_inputs); 0 = none.
  int64_t n_embd_per_layer = 0;
  // A feed_forward_length array that varies (gemma4's wider FFNs on shared-KV layers): each
  // layer's width; empty when every layer's is n_ff (n_ff is then the widest).
  std::vector<int64_t> layer_ff;

  // BERT (arch Bert): a post-norm encoder. Absolute position and token-type embeddings instead
  // of RoPE (n_rot = 0), LayerNorm with bias (eps norm_eps), attention that sees the whole
  // sequence (causal = false), a plain GELU FFN with biases, no output head: the forward pass
  // outputs the final token states, which `pooling` turns into one embedding.
  bool causal = true;
  float norm_eps = 1e-12f;  // attention.layer_norm_epsilon (LayerNorm models)
  Pooling pooling = Pooling::None;
  int64_t n_token_types = 0;

  // Hybrid models (qwen35): per layer, 1 for a Gated DeltaNet layer (a recurrent state, no KV
  // rows), 0 for a full-attention one; empty for every other model.
  std::vector<uint8_t> recurrent_layer;
  DeltaNetShape delta_net;
  // qwen35: the Q projection gives each head's queries and an output gate, attention's output
  // times sigmoid(gate) (the file interleaves them per head; ModelWeights splits them).
  bool has_attn_gate = false;
  // Multi-token-prediction layers after the n_layer (nextn_predict_layers; qwen35, qwen35moe):
  // the first drafts for the model (ModelWeights::mtp), as layer n_layer of the KV cache when
  // a forward pass runs it (ForwardOptions::mtp); the others are not used.
  int64_t n_nextn = 0;

  bool is_hybrid() const { return !recurrent_layer.empty(); }
  // The MTP block's layer (a full-attention layer after the others), when has_mtp.
  bool has_mtp() const { return n_nextn > 0; }
  int64_t mtp_layer() const { return n_layer; }
  bool is_recurrent(int64_t layer) const {
    return layer < static_cast<int64_t>(recurrent_layer.size()) && recurrent_layer[static_cast<size_t>(layer)] != 0;
  }
  // A layer's head size and rotated dims (the window layers' own for gemma4).
  int64_t layer_head_dim(int64_t layer) const {
    return head_dim_swa > 0 && uses_sliding_window(layer) ? head_dim_swa : head_dim;
  }
  int64_t layer_n_rot(int64_t layer) const { return n_rot_swa > 0 && uses_sliding_window(layer) ? n_rot_swa : n_rot; }
  int64_t window_head_dim() const { return head_dim_swa > 0 ? head_dim_swa : head_dim; }
  int64_t window_n_rot() const { return n_rot_swa > 0 ? n_rot_swa : n_rot; }
  // The head size and rotated dims of the layers a rope op of `which` turns (the window
  // layers' own for SlidingWindow, every other layer's otherwise).
  int64_t rope_head_dim(LayerRope which) const { return which == LayerRope::SlidingWindow ? window_head_dim() : head_dim; }
  int64_t rope_n_rot(LayerRope which) const { return which == LayerRope::SlidingWindow ? window_n_rot() : n_rot; }
  int64_t layer_q_width(int64_t layer) const { return layer_head_dim(layer) * n_head; }
  int64_t layer_kv_width(int64_t layer) const { return layer_head_dim(layer) * n_head_kv; }
  int64_t layer_ff_width(int64_t layer) const { return layer_ff.empty() ? n_ff : layer_ff[static_cast<size_t>(layer)]; }
  // The layer whose KV cache `layer` attends over: itself, or for a shared-KV layer an earlier
  // one (kv_layer(l) < l, never itself shared).
  int64_t kv_layer(int64_t layer) const {
    const int64_t first_shared = n_layer - n_kv_shared;
    if (n_kv_shared == 0 || layer < first_shared) return layer;
    return first_shared - (uses_sliding_window(layer) ? 2 : 1);
  }
  bool stores_kv(int64_t layer) const { return !is_recurrent(layer) && kv_layer(layer) == layer; }
  // The widest head of any layer: the KV rows' width (narrower layers use the first values of
  // each row) and the activations'.
  int64_t max_head_dim() const { return std::max(head_dim, head_dim_swa); }
  int64_t n_embd_kv() const { return max_head_dim() * n_head_kv; }
  // The K and V rows each position stores (the KV cache's shape); with_mtp: the MTP block's
  // layer too, after the others.
  KvRowShape kv_rows(bool with_mtp = false) const;
  // The recurrent layers' states for n_slots sequence slots (empty but for a hybrid model);
  // with_mtp, each state carries the MTP block's input row too, and a verification's rows keep
  // theirs (RecurrentLayout::n_row_states).
  RecurrentLayout recurrent_states(int n_slots, bool with_mtp = false) const {
    RecurrentLayout r =
        RecurrentLayout::for_layers(recurrent_layer, delta_net.conv_floats(), delta_net.matrix_floats(), n_slots);
    if (with_mtp && !r.empty()) {
      r.carry_floats = n_embd;
      r.n_row_states = RecurrentLayout::kVerifyRowStates;
    }
    return r;
  }
  bool is_encoder() const { return arch == Architecture::Bert; }
  int64_t n_embd_q() const { return max_head_dim() * n_head; }
  bool is_moe() const { return n_expert > 0; }
  bool uses_sliding_window(int64_t layer) const {
    if (n_swa <= 0) return false;
    if (!window_layers.empty()) return window_layers[static_cast<size_t>(layer)] != 0;
    return swa_period == 0 || layer % swa_period < swa_period - 1;
  }
  LayerRope layer_rope(int64_t layer) const {
    if (n_no_rope_step > 0 && (layer + 1) % n_no_rope_step == 0) return LayerRope::None;
    return has_swa_rope && uses_sliding_window(layer) ? LayerRope::SlidingWindow : LayerRope::Full;
  }

  static Result<ModelConfig> from_gguf(const gguf::File& file);
};

// "swiglu", "geglu", "swiglu-oai" (gpt-oss's clamped SwiGLU).
const char* ffn_activation_name(FfnActivation activation);

// "none", "linear", "yarn", "longrope" (the GGUF spelling).
const char* rope_scaling_name(RopeScaling scaling);

// Architectures this engine runs, for error messages: "llama, qwen2, qwen2moe, phi3, ...".
const char* supported_architectures();

}  // namespace inferscope
