#include "engine/graph/decoder_graph.h"

#include <cmath>
#include <utility>

namespace inferscope {

namespace {

OpLabel at(OpKind kind, int64_t layer = -1) { return {kind, layer}; }

}  // namespace

AttentionShape attention_shape_for(const ModelConfig& c, const GraphOptions& options, int64_t il) {
  AttentionShape shape{c.attn_scale, c.attn_softcap, c.uses_sliding_window(il) ? c.n_swa : 0, 0, c.causal};
  if (options.kv_window > 0 && (shape.window == 0 || options.kv_window < shape.window)) {
    shape.window = options.kv_window;
    shape.sinks = options.kv_sinks;
  }
  return shape;
}

AttentionShape DecoderGraph::attention_shape(const LayerWeights& l, int64_t il) const {
  AttentionShape shape = attention_shape_for(config_, options_, il);
  if (l.attn_sinks.present()) shape.sink_logits = &l.attn_sinks;
  return shape;
}

Status DecoderGraph::run(const Chunk& chunk, std::span<const int32_t> tokens) {
  if (chunk.mtp_draft != MtpDraft::None) return mtp_draft(chunk, tokens);
  const ModelWeights& w = model_.weights();
  INFERSCOPE_RETURN_IF_ERROR(ops_.embed(tokens, at(OpKind::Embed)));
  if (config_.n_embd_per_layer > 0) INFERSCOPE_RETURN_IF_ERROR(per_layer_inputs(tokens, chunk.n));
  const int64_t n_layers = chunk.n_layers > 0 ? chunk.n_layers : config_.n_layer;
  for (int64_t il = 0; il < n_layers; ++il) {
    const LayerWeights& l = w.layers[static_cast<size_t>(il)];
    INFERSCOPE_RETURN_IF_ERROR(config_.is_recurrent(il) ? delta_net_block(l, il, chunk) : attention_block(l, il, chunk));
    INFERSCOPE_RETURN_IF_ERROR(ffn_block(l, il, chunk.n));
    if (l.per_layer_gate.present()) INFERSCOPE_RETURN_IF_ERROR(per_layer_block(l, il, chunk.n));
    if (l.out_scale.present()) {
      INFERSCOPE_RETURN_IF_ERROR(ops_.scale(Act::X, chunk.n, config_.n_embd, l.out_scale.data[0], at(OpKind::Add, il)));
    }
  }
  if (chunk.n_logits > 0) INFERSCOPE_RETURN_IF_ERROR(output(chunk));
  return options_.mtp && n_layers == config_.n_layer ? mtp_catch_up(chunk, tokens) : Status::ok();
}

// The MTP block over the chunk's rows, row i paired with the model's rms_norm(x) of row i - 1
// (the slot's carried row for a span's first), which writes its KV rows; the span's last
// rms_norm(x) becomes the slot's carried row.
Status DecoderGraph::mtp_catch_up(const Chunk& chunk, std::span<const int32_t> tokens) {
  const int64_t il = config_.mtp_layer();
  INFERSCOPE_RETURN_IF_ERROR(
      ops_.rms_norm(Act::X, 0, model_.weights().output_norm, Act::H, chunk.n, {}, at(OpKind::Norm, il)));
  INFERSCOPE_RETURN_IF_ERROR(ops_.carry_hidden(Act::H, chunk, true, at(OpKind::Embed, il)));
  return mtp_block(chunk, tokens);
}

// One drafted token through the MTP block, its hidden row the slot's carried one or the last
// draft's output; the block's own rms_norm(x) goes to MtpHidden (the next draft's hidden row)
// and through its head to the logits.
Status DecoderGraph::mtp_draft(const Chunk& chunk, std::span<const int32_t> tokens) {
  const ModelWeights& w = model_.weights();
  const MtpWeights& m = w.mtp;
  const int64_t il = config_.mtp_layer();
  if (chunk.mtp_draft == MtpDraft::First) {
    INFERSCOPE_RETURN_IF_ERROR(ops_.carry_hidden(Act::MtpHidden, chunk, false, at(OpKind::Embed, il)));
  }
  INFERSCOPE_RETURN_IF_ERROR(mtp_block(chunk, tokens));
  const WeightMatrix& head = m.head.present() ? m.head : w.output;
  const WeightMatrix* feeds[] = {&head};
  const int64_t first = chunk.n - chunk.n_logits;
  INFERSCOPE_RETURN_IF_ERROR(ops_.rms_norm(Act::X, first, m.head_norm.present() ? m.head_norm : w.output_norm,
                                           Act::MtpHidden, chunk.n_logits, feeds, at(OpKind::Norm, il)));
  const MatmulOutput out[] = {{&head, Act::Logits}};
  return ops_.matmul(out, Act::MtpHidden, chunk.n_logits, at(OpKind::Output, il));
}

// x = eh_proj([enorm(embed(tokens)) | hnorm(MtpHidden)]), then the block's attention (layer
// mtp_layer() of the KV cache) and FFN.
Status DecoderGraph::mtp_block(const Chunk& chunk, std::span<const int32_t> tokens) {
  const ModelWeights& w = model_.weights();
  const MtpWeights& m = w.mtp;
  const int64_t il = config_.mtp_layer(), n = chunk.n, E = config_.n_embd;
  const WeightMatrix& table = m.embed.present() ? m.embed : w.token_embd;
  INFERSCOPE_RETURN_IF_ERROR(ops_.lookup(table, tokens, config_.embd_scale, Act::X, at(OpKind::Embed, il)));
  INFERSCOPE_RETURN_IF_ERROR(ops_.rms_norm(Act::X, 0, m.enorm, Act::H, n, {}, at(OpKind::Norm, il)));
  INFERSCOPE_RETURN_IF_ERROR(ops_.copy_columns(Act::MtpInput, 0, Act::H, n, E, at(OpKind::Embed, il)));
  INFERSCOPE_RETURN_IF_ERROR(ops_.rms_norm(Act::MtpHidden, 0, m.hnorm, Act::H, n, {}, at(OpKind::Norm, il)));
  INFERSCOPE_RETURN_IF_ERROR(ops_.copy_columns(Act::MtpInput, E, Act::H, n, E, at(OpKind::Embed, il)));
  const MatmulOutput projection[] = {{&m.eh_proj, Act::X}};
  INFERSCOPE_RETURN_IF_ERROR(ops_.matmul(projection, Act::MtpInput, n, at(OpKind::Matmul, il)));
  INFERSCOPE_RETURN_IF_ERROR(attention_block(m.block, il, chunk));
  return ffn_block(m.block, il, n);
}

// gemma4: every layer's input for each token at once (ModelWeights::per_layer_token_embd):
// PerLayer = (rms_norm(X Wproj / sqrt(n_embd)) * proj_norm + the tokens' table rows * sqrt(P))
// / sqrt(2), X the scaled embedding, the norm over each layer's P values.
Status DecoderGraph::per_layer_inputs(std::span<const int32_t> tokens, int64_t n) {
  const ModelWeights& w = model_.weights();
  const int64_t P = config_.n_embd_per_layer, LP = config_.n_layer * P;
  const MatmulOutput projection[] = {{&w.per_layer_model_proj, Act::PerLayer}};
  INFERSCOPE_RETURN_IF_ERROR(ops_.matmul(projection, Act::X, n, at(OpKind::Matmul)));
  const float inv_sqrt_embd = 1.0f / std::sqrt(static_cast<float>(config_.n_embd));
  INFERSCOPE_RETURN_IF_ERROR(ops_.scale(Act::PerLayer, n, LP, inv_sqrt_embd, at(OpKind::Embed)));
  INFERSCOPE_RETURN_IF_ERROR(
      ops_.rms_norm(Act::PerLayer, 0, w.per_layer_proj_norm, Act::PerLayer, n * config_.n_layer, {}, at(OpKind::Norm)));
  const float sqrt_p = std::sqrt(static_cast<float>(P));
  INFERSCOPE_RETURN_IF_ERROR(ops_.lookup(w.per_layer_token_embd, tokens, sqrt_p, Act::PerLayerRows, at(OpKind::Embed)));
  INFERSCOPE_RETURN_IF_ERROR(ops_.add(Act::PerLayer, Act::PerLayerRows, n, LP, at(OpKind::Embed)));
  return ops_.scale(Act::PerLayer, n, LP, 1.0f / std::sqrt(2.0f), at(OpKind::Embed));
}

// gemma4: x += post_norm(proj(gelu(x Wgate) * the layer's slice of PerLayer)).
Status DecoderGraph::per_layer_block(const LayerWeights& l, int64_t il, int64_t n) {
  const int64_t P = config_.n_embd_per_layer;
  const MatmulOutput gate[] = {{&l.per_layer_gate, Act::FfnA}};
  INFERSCOPE_RETURN_IF_ERROR(ops_.matmul(gate, Act::X, n, at(OpKind::Matmul, il)));
  INFERSCOPE_RETURN_IF_ERROR(ops_.activate(FfnActivation::GeluTanh, Act::FfnA, n, P, {}, at(OpKind::Ffn, il)));
  INFERSCOPE_RETURN_IF_ERROR(ops_.mul_columns(Act::FfnA, Act::PerLayer, il * P, n, P, at(OpKind::Ffn, il)));
  const MatmulOutput proj[] = {{&l.per_layer_proj, Act::H}};
  INFERSCOPE_RETURN_IF_ERROR(ops_.matmul(proj, Act::FfnA, n, at(OpKind::Matmul, il)));
  INFERSCOPE_RETURN_IF_ERROR(ops_.rms_norm(Act::H, 0, l.per_layer_post_norm, Act::H, n, {}, at(OpKind::Norm, il)));
  return ops_.add(Act::X, Act::H, n, config_.n_embd, at(OpKind::Add, il));
}

// x += post_norm(attention(rope(qk_norm(h Wq + bq)), rope(qk_norm(h Wk + bk)), h Wv + bv) Wo),
// h = rms_norm(x), or x itself without pre-norms (olmo2); qk_norm per head (qwen3) or over all
// of Q and of K (olmo2: one row of the norm's width per token), where the model has it.
// A shared-KV layer (gemma4) projects only Q and attends over kv_layer(il)'s rows (rope then
// turns the K left from an earlier layer too, which nothing reads); a layer without attn_v
// takes V from K's projection (gemma4), V normalized where the model says (has_v_norm).
Status DecoderGraph::attention_block(const LayerWeights& l, int64_t il, const Chunk& chunk) {
  const int64_t n = chunk.n;
  const bool gated = l.wq_gate.present();
  const bool stores = config_.stores_kv(il);
  const WeightMatrix& wv = l.wv.present() ? l.wv : l.wk;
  MatmulOutput projections[4] = {{&l.wq, Act::Q}};
  size_t count = 1;
  if (stores) {
    projections[count++] = {&l.wk, Act::K};
    projections[count++] = {&wv, Act::V};
  }
  if (gated) projections[count++] = {&l.wq_gate, Act::Gate};
  const WeightMatrix* consumers[4] = {};
  for (size_t i = 0; i < count; ++i) consumers[i] = projections[i].w;
  if (l.attn_norm.present()) {
    INFERSCOPE_RETURN_IF_ERROR(
        ops_.rms_norm(Act::X, 0, l.attn_norm, Act::H, n, std::span(consumers, count), at(OpKind::Norm, il)));
  }
  const Act input = l.attn_norm.present() ? Act::H : Act::X;
  INFERSCOPE_RETURN_IF_ERROR(ops_.matmul(std::span(projections, count), input, n, at(OpKind::Matmul, il)));
  for (auto [bias, act] : {std::pair{&l.bq, Act::Q}, {&l.bk, Act::K}, {&l.bv, Act::V}}) {
    if (bias->present()) INFERSCOPE_RETURN_IF_ERROR(ops_.add_bias(act, *bias, n, at(OpKind::Bias, il)));
  }
  const int64_t kv_width = config_.layer_kv_width(il);
  if (l.attn_q_norm.present()) {
    const int64_t q_rows = n * (config_.layer_q_width(il) / l.attn_q_norm.size);
    INFERSCOPE_RETURN_IF_ERROR(ops_.rms_norm(Act::Q, 0, l.attn_q_norm, Act::Q, q_rows, {}, at(OpKind::Norm, il)));
  }
  if (l.attn_k_norm.present()) {
    const int64_t k_rows = n * (kv_width / l.attn_k_norm.size);
    INFERSCOPE_RETURN_IF_ERROR(ops_.rms_norm(Act::K, 0, l.attn_k_norm, Act::K, k_rows, {}, at(OpKind::Norm, il)));
  }
  if (l.attn_v_norm.present()) {
    const int64_t v_rows = n * (kv_width / l.attn_v_norm.size);
    INFERSCOPE_RETURN_IF_ERROR(ops_.rms_norm(Act::V, 0, l.attn_v_norm, Act::V, v_rows, {}, at(OpKind::Norm, il)));
  }
  const LayerRope rope = config_.layer_rope(il);
  if (rope != LayerRope::None) INFERSCOPE_RETURN_IF_ERROR(ops_.rope(chunk, rope, at(OpKind::Rope, il)));
  if (stores) INFERSCOPE_RETURN_IF_ERROR(ops_.kv_store(il, chunk, at(OpKind::KvStore, il)));
  const WeightMatrix* wo[] = {&l.wo};
  INFERSCOPE_RETURN_IF_ERROR(ops_.attention(config_.kv_layer(il), chunk, attention_shape(l, il),
                                            gated ? Feeds() : Feeds(wo), at(OpKind::Attention, il)));
  if (gated) {
    INFERSCOPE_RETURN_IF_ERROR(ops_.glu(FfnActivation::Sigmoid, Act::Gate, Act::Attn, n, config_.layer_q_width(il), wo,
                                        at(OpKind::Attention, il)));
  }
  const MatmulOutput out[] = {{&l.wo, Act::H}};
  INFERSCOPE_RETURN_IF_ERROR(ops_.matmul(out, gated ? Act::Gate : Act::Attn, n, at(OpKind::Matmul, il)));
  if (l.bo.present()) INFERSCOPE_RETURN_IF_ERROR(ops_.add_bias(Act::H, l.bo, n, at(OpKind::Bias, il)));
  if (l.attn_post_norm.present()) {
    INFERSCOPE_RETURN_IF_ERROR(ops_.rms_norm(Act::H, 0, l.attn_post_norm, Act::H, n, {}, at(OpKind::Norm, il)));
  }
  return ops_.add(Act::X, Act::H, n, config_.n_embd, at(OpKind::Add, il));
}

// x += silu(h Wz) * rms_norm(delta_net(silu(conv(h Wqkv)))) Wout, h = rms_norm(x): the Gated
// DeltaNet's q, k and v convolved together, the recurrence per value head from the slot's
// state, each head's output normalized and gated.
Status DecoderGraph::delta_net_block(const LayerWeights& l, int64_t il, const Chunk& chunk) {
  const int64_t n = chunk.n;
  const DeltaNetShape& d = config_.delta_net;
  const WeightMatrix* inputs[] = {&l.ssm_qkv, &l.ssm_z, &l.ssm_alpha, &l.ssm_beta};
  INFERSCOPE_RETURN_IF_ERROR(ops_.rms_norm(Act::X, 0, l.attn_norm, Act::H, n, inputs, at(OpKind::Norm, il)));
  const MatmulOutput projections[] = {
      {&l.ssm_qkv, Act::Conv}, {&l.ssm_z, Act::Gate}, {&l.ssm_alpha, Act::Alpha}, {&l.ssm_beta, Act::Beta}};
  INFERSCOPE_RETURN_IF_ERROR(ops_.matmul(projections, Act::H, n, at(OpKind::Matmul, il)));
  INFERSCOPE_RETURN_IF_ERROR(ops_.ssm_conv(il, chunk, l.ssm_conv1d, at(OpKind::Recurrent, il)));
  INFERSCOPE_RETURN_IF_ERROR(ops_.delta_net(il, chunk, {&l.ssm_dt, &l.ssm_a}, at(OpKind::Recurrent, il)));
  INFERSCOPE_RETURN_IF_ERROR(
      ops_.rms_norm(Act::Attn, 0, l.ssm_norm, Act::Attn, n * d.n_v_heads, {}, at(OpKind::Norm, il)));
  const WeightMatrix* out_feeds[] = {&l.ssm_out};
  INFERSCOPE_RETURN_IF_ERROR(
      ops_.glu(FfnActivation::Silu, Act::Gate, Act::Attn, n, d.value_dim(), out_feeds, at(OpKind::Recurrent, il)));
  const MatmulOutput out[] = {{&l.ssm_out, Act::H}};
  INFERSCOPE_RETURN_IF_ERROR(ops_.matmul(out, Act::Gate, n, at(OpKind::Matmul, il)));
  return ops_.add(Act::X, Act::H, n, config_.n_embd, at(OpKind::Add, il));
}

// x += post_norm(ffn(rms_norm(x))): a GLU FFN, or a mixture of experts. Without pre-norms
// (olmo2, dense FFNs only) the FFN reads x itself.
Status DecoderGraph::ffn_block(const LayerWeights& l, int64_t il, int64_t n) {
  // The normalized rows feed the dense FFN, or the router, the experts and the shared expert.
  const WeightMatrix* consumers[] = {&l.ffn_gate,     &l.ffn_up,       &l.ffn_gate_inp,   &l.ffn_gate_exps,
                                     &l.ffn_up_exps,  &l.ffn_gate_shexp, &l.ffn_up_shexp};
  if (l.ffn_norm.present()) {
    INFERSCOPE_RETURN_IF_ERROR(ops_.rms_norm(Act::X, 0, l.ffn_norm, Act::H, n, consumers, at(OpKind::Norm, il)));
  }
  if (config_.is_moe()) {
    INFERSCOPE_RETURN_IF_ERROR(moe_ffn(l, il, n));
  } else {
    const Act input = l.ffn_norm.present() ? Act::H : Act::X;
    INFERSCOPE_RETURN_IF_ERROR(glu_ffn(l.ffn_gate, l.ffn_up, l.ffn_down, input, Act::FfnOut, il, n));
  }
  if (l.ffn_post_norm.present()) {
    INFERSCOPE_RETURN_IF_ERROR(ops_.rms_norm(Act::FfnOut, 0, l.ffn_post_norm, Act::FfnOut, n, {}, at(OpKind::Norm, il)));
  }
  return ops_.add(Act::X, Act::FfnOut, n, config_.n_embd, at(OpKind::Add, il));
}

// out = down(act(gate h) * up h), h = `in`: the dense FFN, or a mixture's shared expert.
Status DecoderGraph::glu_ffn(const WeightMatrix& gate, const WeightMatrix& up, const WeightMatrix& down, Act in,
                             Act out, int64_t il, int64_t n) {
  const MatmulOutput gate_up[] = {{&gate, Act::FfnA}, {&up, Act::FfnB}};
  INFERSCOPE_RETURN_IF_ERROR(ops_.matmul(gate_up, in, n, at(OpKind::Matmul, il)));
  const WeightMatrix* feeds[] = {&down};
  INFERSCOPE_RETURN_IF_ERROR(
      ops_.glu(config_.ffn_activation, Act::FfnA, Act::FfnB, n, gate.rows, feeds, at(OpKind::Ffn, il)));
  const MatmulOutput product[] = {{&down, out}};
  return ops_.matmul(product, Act::FfnA, n, at(OpKind::Matmul, il));
}

// A mixture of experts: the router picks k experts for each token, each chosen expert runs as a
// GLU FFN on its tokens' rows (the products of every route at once: matmul_experts), and the
// outputs are summed with the router's weights, in ascending expert id; qwen2moe adds a shared
// expert, gated per token by a sigmoid; gpt-oss adds biases to the router and to every expert
// product.
Status DecoderGraph::moe_ffn(const LayerWeights& l, int64_t il, int64_t n) {
  const int64_t k = config_.n_expert_used;
  const MatmulOutput router[] = {{&l.ffn_gate_inp, Act::Router}};
  INFERSCOPE_RETURN_IF_ERROR(ops_.matmul(router, Act::H, n, at(OpKind::Matmul, il)));
  if (l.ffn_gate_inp_b.present()) {
    INFERSCOPE_RETURN_IF_ERROR(ops_.add_bias(Act::Router, l.ffn_gate_inp_b, n, at(OpKind::Bias, il)));
  }
  const bool renormalize = config_.gating == ExpertGating::SoftmaxTopKRenormalized;
  INFERSCOPE_RETURN_IF_ERROR(ops_.moe_route(n, config_.n_expert, k, renormalize, at(OpKind::Moe, il)));
  const MatmulOutput gate_up[] = {{&l.ffn_gate_exps, Act::ExpertA}, {&l.ffn_up_exps, Act::ExpertB}};
  INFERSCOPE_RETURN_IF_ERROR(ops_.matmul_experts(gate_up, Act::H, ExpertInput::PerToken, n, k, at(OpKind::Matmul, il)));
  if (l.ffn_gate_exps_b.present()) {
    INFERSCOPE_RETURN_IF_ERROR(ops_.add_expert_bias(Act::ExpertA, l.ffn_gate_exps_b, n, k, at(OpKind::Bias, il)));
    INFERSCOPE_RETURN_IF_ERROR(ops_.add_expert_bias(Act::ExpertB, l.ffn_up_exps_b, n, k, at(OpKind::Bias, il)));
  }
  const WeightMatrix* feeds[] = {&l.ffn_down_exps};
  INFERSCOPE_RETURN_IF_ERROR(ops_.glu(config_.ffn_activation, Act::ExpertA, Act::ExpertB, n * k, l.ffn_gate_exps.rows,
                                      feeds, at(OpKind::Ffn, il)));
  const MatmulOutput down[] = {{&l.ffn_down_exps, Act::ExpertOut}};
  INFERSCOPE_RETURN_IF_ERROR(ops_.matmul_experts(down, Act::ExpertA, ExpertInput::PerRoute, n, k, at(OpKind::Matmul, il)));
  if (l.ffn_down_exps_b.present()) {
    INFERSCOPE_RETURN_IF_ERROR(ops_.add_expert_bias(Act::ExpertOut, l.ffn_down_exps_b, n, k, at(OpKind::Bias, il)));
  }
  if (!l.ffn_gate_shexp.present()) return ops_.moe_combine(n, k, nullptr, at(OpKind::Moe, il));
  INFERSCOPE_RETURN_IF_ERROR(glu_ffn(l.ffn_gate_shexp, l.ffn_up_shexp, l.ffn_down_shexp, Act::H, Act::SharedOut, il, n));
  return ops_.moe_combine(n, k, &l.ffn_gate_inp_shexp, at(OpKind::Moe, il));
}

// Logits of the chunk's last n_logits rows (or their normalized states, hidden_states).
Status DecoderGraph::output(const Chunk& chunk) {
  const ModelWeights& w = model_.weights();
  const int64_t first = chunk.n - chunk.n_logits;
  if (options_.hidden_states) {
    return ops_.rms_norm(Act::X, first, w.output_norm, Act::Logits, chunk.n_logits, {}, at(OpKind::Output));
  }
  const WeightMatrix* head[] = {&w.output};
  INFERSCOPE_RETURN_IF_ERROR(ops_.rms_norm(Act::X, first, w.output_norm, Act::H, chunk.n_logits, head, at(OpKind::Norm)));
  const MatmulOutput out[] = {{&w.output, Act::Logits}};
  INFERSCOPE_RETURN_IF_ERROR(ops_.matmul(out, Act::H, chunk.n_logits, at(OpKind::Output)));
  if (config_.final_softcap <= 0.0f) return Status::ok();
  return ops_.softcap(Act::Logits, chunk.n_logits, config_.n_vocab, config_.final_softcap, at(OpKind::Output));
}

}  // namespace inferscope
