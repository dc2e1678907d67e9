// The decoder's forward pass over a chunk (llama and the families built on it: mistral, qwen2,
// qwen2moe, phi3, gemma, gemma2), top to bottom as the papers write it:
//
//   x = embed(tokens)                                  gemma: scaled by sqrt(n_embd)
//   for each layer:
//     h = rms_norm(x)
//     q, k, v = h Wq, h Wk, h Wv  (+ bq, bk, bv)       qwen2: biases
//     q, k = rope(q, k) ; store k, v in the cache
//     x += post_norm(attention(q, K, V) Wo)            a sliding window on some layers;
//                                                      gemma2: soft-capped scores, post-norms
//     h = rms_norm(x)
//     x += post_norm(ffn(h))                           ffn: down(act(gate h) * up h), or a
//                                                      mixture of such experts (+ a gated
//                                                      shared expert: qwen2moe)
//   logits = rms_norm(x) Wout                          gemma2: soft-capped
//
// Hybrid models (qwen35) replace attention on their recurrent layers by a Gated DeltaNet
// (ModelConfig::delta_net): x += silu(x Wz) * rms_norm(delta_net(conv(h Wqkv))) Wout, and gate
// the other layers' attention output by sigmoid(h Wq_gate).
//
// Gemma 4 adds per-layer inputs (made from the tokens and the scaled embedding before the first
// layer; each layer adds x += post_norm(proj(gelu(x Wgate) * its input)) after its FFN, then
// scales x by its out_scale), normalizes V, and its last layers attend over earlier layers' KV
// without storing any (ModelConfig::kv_layer).
//
// An architecture's differences are the ModelConfig switches and the optional tensors read in
// decoder_graph.cpp, and nowhere else. A self-draft's chunk (Chunk::n_layers) stops after its
// first layers; with GraphOptions::hidden_states the output is rms_norm(x) itself.
//
// A model's MTP block (GraphOptions::mtp; engine/model/model_weights.h MtpWeights) runs after
// the model on every row, each paired with rms_norm(x) of the row before it: its KV rows, and
// the slot's carried row for the next chunk (mtp_catch_up). A draft chunk (Chunk::mtp_draft)
// runs the block alone on one drafted token and outputs the block's logits (mtp_draft).
#pragma once

#include "engine/graph/chunk_graph.h"

namespace inferscope {

class DecoderGraph : public ChunkGraph {
 public:
  DecoderGraph(const Model& model, BackendOps& ops, const GraphOptions& options)
      : model_(model), config_(model.config()), ops_(ops), options_(options) {}

  Status run(const Chunk& chunk, std::span<const int32_t> tokens) override;

 private:
  Status attention_block(const LayerWeights& l, int64_t il, const Chunk& chunk);
  Status delta_net_block(const LayerWeights& l, int64_t il, const Chunk& chunk);
  Status ffn_block(const LayerWeights& l, int64_t il, int64_t n);
  Status glu_ffn(const WeightMatrix& gate, const WeightMatrix& up, const WeightMatrix& down, Act in, Act out,
                 int64_t il, int64_t n);
  Status moe_ffn(const LayerWeights& l, int64_t il, int64_t n);
  Status per_layer_inputs(std::span<const int32_t> tokens, int64_t n);
  Status per_layer_block(const LayerWeights& l, int64_t il, int64_t n);
  Status output(const Chunk& chunk);
  Status mtp_catch_up(const Chunk& chunk, std::span<const int32_t> tokens);
  Status mtp_draft(const Chunk& chunk, std::span<const int32_t> tokens);
  Status mtp_block(const Chunk& chunk, std::span<const int32_t> tokens);
  AttentionShape attention_shape(const LayerWeights& l, int64_t il) const;

  const Model& model_;
  const ModelConfig& config_;
  BackendOps& ops_;
  GraphOptions options_;
};

// What layer `il`'s attention sees: the model's own sliding window where the layer has one,
// else StreamingLLM's window with its sinks (the narrower wins), else every position.
AttentionShape attention_shape_for(const ModelConfig& config, const GraphOptions& options, int64_t il);

}  // namespace inferscope
