#include "engine/graph/encoder_graph.h"

#include <utility>

#include "engine/graph/decoder_graph.h"

namespace inferscope {

namespace {

OpLabel at(OpKind kind, int64_t layer = -1) { return {kind, layer}; }

}  // namespace

// Token rows, then each row's position and token type (0) added, normalized.
Status EncoderGraph::run(const Chunk& chunk, std::span<const int32_t> tokens) {
  const ModelWeights& w = model_.weights();
  positions_.clear();
  for (const ChunkSpan& s : chunk.spans) {
    for (int64_t t = 0; t < s.n; ++t) positions_.push_back(static_cast<int32_t>(s.pos0 + t));
  }
  token_types_.assign(tokens.size(), 0);
  INFERSCOPE_RETURN_IF_ERROR(ops_.embed(tokens, at(OpKind::Embed)));
  INFERSCOPE_RETURN_IF_ERROR(ops_.add_rows(w.position_embd, positions_, at(OpKind::Embed)));
  INFERSCOPE_RETURN_IF_ERROR(ops_.add_rows(w.token_types, token_types_, at(OpKind::Embed)));
  INFERSCOPE_RETURN_IF_ERROR(
      ops_.layer_norm(Act::X, 0, w.token_embd_norm, w.token_embd_norm_b, Act::X, chunk.n, {}, at(OpKind::Embed)));
  for (int64_t il = 0; il < config_.n_layer; ++il) {
    INFERSCOPE_RETURN_IF_ERROR(layer(w.layers[static_cast<size_t>(il)], il, chunk));
  }
  return Status::ok();
}

// One post-norm layer on X; the last layer's final norm writes the output rows instead.
Status EncoderGraph::layer(const LayerWeights& l, int64_t il, const Chunk& chunk) {
  const int64_t n = chunk.n, E = config_.n_embd;
  const MatmulOutput projections[] = {{&l.wq, Act::Q}, {&l.wk, Act::K}, {&l.wv, Act::V}};
  INFERSCOPE_RETURN_IF_ERROR(ops_.matmul(projections, Act::X, n, at(OpKind::Matmul, il)));
  for (auto [bias, act] : {std::pair{&l.bq, Act::Q}, {&l.bk, Act::K}, {&l.bv, Act::V}}) {
    INFERSCOPE_RETURN_IF_ERROR(ops_.add_bias(act, *bias, n, at(OpKind::Bias, il)));
  }
  INFERSCOPE_RETURN_IF_ERROR(ops_.kv_store(il, chunk, at(OpKind::KvStore, il)));
  const WeightMatrix* wo[] = {&l.wo};
  const AttentionShape shape = attention_shape_for(config_, options_, il);
  INFERSCOPE_RETURN_IF_ERROR(ops_.attention(il, chunk, shape, wo, at(OpKind::Attention, il)));
  const MatmulOutput out[] = {{&l.wo, Act::H}};
  INFERSCOPE_RETURN_IF_ERROR(ops_.matmul(out, Act::Attn, n, at(OpKind::Matmul, il)));
  INFERSCOPE_RETURN_IF_ERROR(ops_.add_bias(Act::H, l.bo, n, at(OpKind::Bias, il)));
  INFERSCOPE_RETURN_IF_ERROR(ops_.add(Act::X, Act::H, n, E, at(OpKind::Add, il)));
  const WeightMatrix* up[] = {&l.ffn_up};
  INFERSCOPE_RETURN_IF_ERROR(
      ops_.layer_norm(Act::X, 0, l.attn_output_norm, l.attn_output_norm_b, Act::X, n, up, at(OpKind::Norm, il)));
  const MatmulOutput ffn_up[] = {{&l.ffn_up, Act::FfnA}};
  INFERSCOPE_RETURN_IF_ERROR(ops_.matmul(ffn_up, Act::X, n, at(OpKind::Matmul, il)));
  INFERSCOPE_RETURN_IF_ERROR(ops_.add_bias(Act::FfnA, l.ffn_up_b, n, at(OpKind::Bias, il)));
  const WeightMatrix* down[] = {&l.ffn_down};
  INFERSCOPE_RETURN_IF_ERROR(
      ops_.activate(config_.ffn_activation, Act::FfnA, n, config_.n_ff, down, at(OpKind::Ffn, il)));
  const MatmulOutput ffn_down[] = {{&l.ffn_down, Act::FfnOut}};
  INFERSCOPE_RETURN_IF_ERROR(ops_.matmul(ffn_down, Act::FfnA, n, at(OpKind::Matmul, il)));
  INFERSCOPE_RETURN_IF_ERROR(ops_.add_bias(Act::FfnOut, l.ffn_down_b, n, at(OpKind::Bias, il)));
  INFERSCOPE_RETURN_IF_ERROR(ops_.add(Act::X, Act::FfnOut, n, E, at(OpKind::Add, il)));
  const bool last = il == config_.n_layer - 1 && chunk.n_logits > 0;
  if (!last) {
    const WeightMatrix* next[] = {&l.wq, &l.wk, &l.wv};
    return ops_.layer_norm(Act::X, 0, l.layer_output_norm, l.layer_output_norm_b, Act::X, n, next,
                           at(OpKind::Norm, il));
  }
  return ops_.layer_norm(Act::X, n - chunk.n_logits, l.layer_output_norm, l.layer_output_norm_b, Act::Logits,
                         chunk.n_logits, {}, at(OpKind::Output));
}

}  // namespace inferscope
