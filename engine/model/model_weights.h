// The weights of a model (llama family, or BERT's encoder), bound by name from a GGUF file and shape-checked
// against the config (GGUF-FORMATS.md section 6). Matrices are used in place from the mmap.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "engine/core/status.h"
#include "engine/gguf/gguf_file.h"
#include "engine/model/model_config.h"
#include "kernels/formats/ggml_type.h"

namespace inferscope {

// A stack of `n_mats` matrices of `rows` rows x `cols` elements (GGUF ne = {cols, rows, n_mats}).
// Multiplying by an activation vector x[cols] gives y[rows].
struct WeightMatrix {
  const gguf::TensorInfo* tensor = nullptr;  // nullptr when an optional tensor is absent
  kernels::GgmlType type = kernels::GgmlType::F32;
  const uint8_t* data = nullptr;
  int64_t cols = 0;
  int64_t rows = 0;
  int64_t n_mats = 1;
  int64_t row_bytes = 0;
  // INT8 per-channel matrices (kernels/cpu/int8_rows.h), whose data is their Q8_0 re-blocking:
  // the I8 rows and per-row scales as stored, for LLM.int8() (kernels/cpu/llm_int8.h).
  const int8_t* i8 = nullptr;
  const float* row_scales = nullptr;

  bool present() const { return data != nullptr; }
  const uint8_t* matrix(int64_t index) const { return data + index * rows * row_bytes; }
  // Rows [first, first + count) of a single matrix, e.g. Q, K and V of phi3's fused attn_qkv.
  WeightMatrix row_slice(int64_t first, int64_t count) const {
    return WeightMatrix{tensor,    type, row(first), cols, count, 1, row_bytes, i8 ? i8 + first * cols : nullptr,
                        row_scales ? row_scales + first : nullptr};
  }
  const uint8_t* row(int64_t r) const { return data + r * row_bytes; }
  // Bytes of this matrix (of its rows only, for a row slice).
  uint64_t bytes() const { return present() ? static_cast<uint64_t>(rows * n_mats * row_bytes) : 0; }
};

// A 1-D float vector (norm weights, biases), converted to F32 at load when stored otherwise.
struct WeightVector {
  const float* data = nullptr;
  int64_t size = 0;
  bool present() const { return data != nullptr; }
};

// phi3 stores Q, K, V as one attn_qkv and gate, up as one ffn_up (gate first); wq..wv and
// ffn_gate/ffn_up are then row slices of those tensors.
struct LayerWeights {
  WeightVector attn_norm;   // [n_embd]
  WeightMatrix wq;          // [n_embd] -> [head_dim * n_head]
  WeightMatrix wk;          // [n_embd] -> [head_dim * n_head_kv]
  WeightMatrix wv;          // [n_embd] -> [head_dim * n_head_kv]
  WeightMatrix wo;          // [head_dim * n_head] -> [n_embd]
  WeightVector bq, bk, bv;  // qwen2 / qwen2moe attention biases
  WeightVector attn_q_norm, attn_k_norm;  // qwen3: [head_dim], each Q and K head's RMSNorm
  WeightVector attn_sinks;  // gpt-oss: [n_head], each head's learned sink logit
  WeightVector attn_post_norm;  // gemma2: [n_embd], applied to the attention output
  // gemma4: V's per-head RMSNorm has no weight; this is ones of [the layer's head_dim], owned by
  // the weights, so that it runs as every other norm.
  WeightVector attn_v_norm;
  // gemma4's per-layer input (ModelConfig::n_embd_per_layer, P its width): after the FFN,
  // x += post_norm(proj(gelu(x per_layer_gate) * the layer's input)); then x *= out_scale.
  WeightMatrix per_layer_gate;      // inp_gate: [n_embd] -> [P]
  WeightMatrix per_layer_proj;      // proj: [P] -> [n_embd]
  WeightVector per_layer_post_norm;  // post_norm: [n_embd]
  WeightVector out_scale;           // layer_output_scale: [1]
  // qwen35: each head's output gate, attention's output times sigmoid(h wq_gate) (the file's
  // attn_q interleaves each head's query and gate rows; bind() reorders them into memory the
  // weights own, wq and wq_gate then row slices of it).
  WeightMatrix wq_gate;  // [n_embd] -> [head_dim * n_head]

  // A Gated DeltaNet layer (qwen35; ModelConfig::delta_net, D = its shape).
  WeightMatrix ssm_qkv;     // attn_qkv: [n_embd] -> [D.channels()] q, k, v of every head
  WeightMatrix ssm_z;       // attn_gate: [n_embd] -> [D.value_dim()] the output norm's gate
  WeightMatrix ssm_alpha;   // [n_embd] -> [D.n_v_heads] the decay's logits
  WeightMatrix ssm_beta;    // [n_embd] -> [D.n_v_heads] the update's logits
  WeightMatrix ssm_conv1d;  // F32 [D.channels()] x [D.conv_kernel]: each channel's taps
  WeightVector ssm_dt;      // [D.n_v_heads] the decay's bias
  WeightVector ssm_a;       // [D.n_v_heads] -exp(A_log): the decay's rate, negative
  WeightVector ssm_norm;    // [D.head_dim] the output's per-head RMSNorm
  WeightMatrix ssm_out;     // [D.value_dim()] -> [n_embd]
  WeightVector ffn_norm;    // [n_embd]
  WeightVector ffn_post_norm;   // gemma2: [n_embd], applied to the FFN output

  // Dense gated FFN: down(act(gate x) * up x), act = silu (SwiGLU) or gelu (GeGLU).
  WeightMatrix ffn_gate;  // [n_embd] -> [n_ff]
  WeightMatrix ffn_up;    // [n_embd] -> [n_ff]
  WeightMatrix ffn_down;  // [n_ff] -> [n_embd]

  // Mixture of experts: router and stacked experts (n_mats = n_expert).
  WeightMatrix ffn_gate_inp;   // [n_embd] -> [n_expert]
  WeightVector ffn_gate_inp_b;  // gpt-oss: [n_expert], the router's bias
  // gpt-oss: each expert's biases, F32 matrices of one row per expert ([n_expert] x width).
  WeightMatrix ffn_gate_exps_b, ffn_up_exps_b;  // [n_expert] x [n_ff_expert]
  WeightMatrix ffn_down_exps_b;                 // [n_expert] x [n_embd]
  WeightMatrix ffn_gate_exps;  // n_expert x ([n_embd] -> [n_ff_expert])
  WeightMatrix ffn_up_exps;    // n_expert x ([n_embd] -> [n_ff_expert])
  WeightMatrix ffn_down_exps;  // n_expert x ([n_ff_expert] -> [n_embd])

  // qwen2moe shared expert, gated per token by sigmoid(ffn_gate_inp_shexp . x).
  WeightVector ffn_gate_inp_shexp;  // [n_embd]
  WeightMatrix ffn_gate_shexp;      // [n_embd] -> [n_ff_shared]
  WeightMatrix ffn_up_shexp;        // [n_embd] -> [n_ff_shared]
  WeightMatrix ffn_down_shexp;      // [n_ff_shared] -> [n_embd]

  // BERT (post-norm): x = LN(x + attn(x) Wo + bo) with attn_output_norm, then
  // x = LN(x + gelu(x Wup + b_up) Wdown + b_down) with layer_output_norm (ffn_up / ffn_down).
  WeightVector bo;  // [n_embd]: BERT's, and gpt-oss's attention output bias
  WeightVector attn_output_norm, attn_output_norm_b;        // [n_embd]
  WeightVector ffn_up_b;                                    // [n_ff]
  WeightVector ffn_down_b;                                  // [n_embd]
  WeightVector layer_output_norm, layer_output_norm_b;      // [n_embd]
};

// A multi-token-prediction block (ModelConfig::n_nextn; qwen35, qwen35moe): for position p it
// reads token x_p and h_{p-1}, the model's normalized last hidden state at p - 1, and predicts
// x_{p+1}:
//   x = eh_proj([enorm(embed(x_p)) | hnorm(h_{p-1})])     eh_proj: [2 n_embd] -> [n_embd]
//   x = block(x)           a full-attention layer (its own KV rows) and its FFN, as the model's
//   h_p' = head_norm(x), logits = h_p' head                h_p' pairs with the next draft token
// embed, head_norm and head are the model's token_embd, output_norm and output where the file
// has none of its own.
struct MtpWeights {
  LayerWeights block;
  WeightMatrix eh_proj;
  WeightVector enorm, hnorm;  // [n_embd]
  WeightMatrix embed;         // nextn.embed_tokens: n_vocab rows of [n_embd], optional
  WeightVector head_norm;     // nextn.shared_head_norm: [n_embd], optional
  WeightMatrix head;          // nextn.shared_head_head: [n_embd] -> [n_vocab], optional

  bool present() const { return eh_proj.present(); }
};

struct ModelWeights {
  WeightMatrix token_embd;  // n_vocab rows of [n_embd]
  // BERT: absolute position rows (n_ctx_train of [n_embd]), token-type rows (n_token_types of
  // [n_embd]; every token is type 0) and the LayerNorm of their sum with the token rows.
  WeightMatrix position_embd;
  WeightMatrix token_types;
  WeightVector token_embd_norm, token_embd_norm_b;  // [n_embd]
  // gemma4's per-layer inputs (P = n_embd_per_layer, L = n_layer): for token t, layer l's is
  //   (rms_norm(x0 per_layer_model_proj / sqrt(n_embd))[l] * per_layer_proj_norm
  //    + per_layer_token_embd[t][l] * sqrt(P)) / sqrt(2),  x0 the scaled token embedding.
  WeightMatrix per_layer_token_embd;  // n_vocab rows of [L * P]
  WeightMatrix per_layer_model_proj;  // [n_embd] -> [L * P]
  WeightVector per_layer_proj_norm;   // [P]
  WeightVector output_norm;  // [n_embd]; absent for BERT
  WeightMatrix output;       // [n_embd] -> [n_vocab]; token_embd when tied; absent for BERT
  bool tied_output = false;
  std::vector<LayerWeights> layers;
  MtpWeights mtp;  // the first MTP block (ModelConfig::has_mtp); absent otherwise

  // Per-pair RoPE frequency divisors, shared by every layer (llama.cpp binds the one tensor to
  // each layer). Llama 3.1+: rope_freqs; Phi-3 LongRoPE: long when the session context exceeds
  // config.n_ctx_orig, else short (both or neither). rope_freqs wins when a file has both kinds.
  WeightVector rope_freqs;          // [n_rot/2]
  WeightVector rope_factors_long;   // [n_rot/2]
  WeightVector rope_factors_short;  // [n_rot/2]

  uint64_t total_bytes = 0;  // bytes of all bound tensors in the file
  std::vector<std::unique_ptr<float[]>> converted;  // owned F32 copies of non-F32 vectors
  // INT8 per-channel matrices (kernels/cpu/int8_rows.h) re-blocked as Q8_0: the matrix's type is
  // then Q8_0 and its data points here (its tensor is still the file's I8 tensor). These are the
  // resident copies of those matrices: Model::load makes no resident copy of such a file.
  std::vector<std::unique_ptr<uint8_t[]>> reblocked;
  // > 0: the file asks for LLM.int8() (inferscope.weights.llm_int8_threshold): its INT8
  // matrices are multiplied by mixed-precision decomposition at this outlier threshold (CPU).
  float llm_int8_threshold = 0;

  // Every present matrix (token_embd, BERT's position and token-type tables, output unless
  // tied, then each layer's, then the MTP block's) and every present vector (output_norm, the
  // RoPE factors, BERT's embedding norm, then each layer's, then the MTP block's), once each, in
  // that order: what a backend copies to its device.
  void for_each_matrix(const std::function<void(const WeightMatrix&)>& f) const;
  void for_each_vector(const std::function<void(const WeightVector&)>& f) const;

  // Binds every tensor the architecture needs; errors name the tensor and the expected shape.
  // `tensor_data`: a copy of the file's tensor data section to point into, or nullptr for the
  // file mapping itself.
  static Result<std::unique_ptr<ModelWeights>> bind(const gguf::File& file, const ModelConfig& config,
                                                    const uint8_t* tensor_data);
};

}  // namespace inferscope
