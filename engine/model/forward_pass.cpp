#include "engine/model/forward_pass.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/dequantize.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/ops.h"

namespace inferscope {

namespace {

constexpr int64_t kRowGranule = 16;  // rows per thread are a multiple of this (kernel tiles)

// Splits [0, total) into nth contiguous ranges aligned to kRowGranule.
std::pair<int64_t, int64_t> thread_range(int64_t total, int ith, int nth) {
  int64_t per = (total + nth - 1) / nth;
  per = (per + kRowGranule - 1) / kRowGranule * kRowGranule;
  int64_t begin = std::min<int64_t>(total, per * ith);
  int64_t end = std::min<int64_t>(total, begin + per);
  return {begin, end};
}

template <class T>
bool try_resize(std::vector<T>& v, int64_t n) {
  try {
    v.assign(static_cast<size_t>(n), T{});
    return true;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

}  // namespace

kernels::RopeParams rope_params_for_context(const ModelConfig& c, const ModelWeights& w, int64_t n_ctx) {
  kernels::RopeParams p;
  p.freq_base = c.rope_freq_base;
  p.freq_scale = c.rope_freq_scale;
  p.attn_factor = c.rope_attn_factor;
  if (w.rope_freqs.present()) {
    p.freq_factors = w.rope_freqs.data;
  } else if (w.rope_factors_long.present()) {
    p.freq_factors = n_ctx > c.n_ctx_orig ? w.rope_factors_long.data : w.rope_factors_short.data;
  }
  if (c.rope_scaling == RopeScaling::Yarn) {
    p.yarn_ext_factor = 1.0f;
    kernels::rope_yarn_corr_dims(c.n_rot, c.n_ctx_orig, c.rope_freq_base, c.yarn_beta_fast, c.yarn_beta_slow,
                                 &p.yarn_corr_low, &p.yarn_corr_high);
  }
  return p;
}

Result<std::unique_ptr<ForwardPass>> ForwardPass::create(std::shared_ptr<const Model> model, ThreadPool& pool,
                                                         const ForwardOptions& options) {
  const ModelConfig& c = model->config();
  int64_t n_ctx = options.n_ctx > 0 ? options.n_ctx : c.n_ctx_train;
  if (options.n_slots < 1) return Status::error("at least one sequence slot is needed");
  auto fp = std::unique_ptr<ForwardPass>(new ForwardPass());
  fp->model_ = std::move(model);
  fp->pool_ = &pool;
  auto kv = KvCache::create(c.n_layer, c.n_embd_kv(), n_ctx, options.n_slots);
  if (!kv) return kv.status();
  fp->kv_ = std::move(*kv);
  fp->rope_ = rope_params_for_context(c, fp->model_->weights(), fp->kv_->n_ctx());
  INFERSCOPE_RETURN_IF_ERROR(fp->allocate(std::max<int64_t>(1, options.max_batch)));
  return fp;
}

ScratchPlan ScratchPlan::for_model(const ModelConfig& c, int64_t n_ctx, int64_t max_batch, int n_threads) {
  ScratchPlan p;
  const int64_t B = max_batch, E = c.n_embd;
  const int64_t F = std::max({c.n_ff, c.n_ff_expert, c.n_ff_shared});
  p.batch = B;
  p.embd = B * E;
  p.q = B * c.n_embd_q();
  p.kv = B * c.n_embd_kv();
  p.ffn = B * F;
  p.router = B * std::max<int64_t>(1, c.n_expert);
  p.routes = B * std::max<int64_t>(1, c.n_expert_used);
  p.scores = n_threads * n_ctx;
  p.rope = B * c.n_rot / 2;
  size_t packed = 0;
  for (kernels::GgmlType t : {kernels::GgmlType::F32, kernels::GgmlType::F16, kernels::GgmlType::BF16,
                              kernels::GgmlType::Q8_0, kernels::GgmlType::Q4_0}) {
    for (int64_t k : {E, c.n_embd_q(), F}) packed = std::max(packed, kernels::packed_activation_bytes(t, k, B));
  }
  p.packed_region = (packed + 63) / 64 * 64;
  return p;
}

uint64_t ScratchPlan::total_bytes() const {
  const int64_t floats = 5 * embd + 2 * q + 2 * kv + 2 * ffn + router + scores + 2 * rope + routes;
  return static_cast<uint64_t>(floats) * sizeof(float) + 3 * packed_region +
         static_cast<uint64_t>(routes) * sizeof(int32_t) + static_cast<uint64_t>(batch) * sizeof(int64_t);
}

Status ForwardPass::allocate(int64_t max_batch) {
  const ScratchPlan p = ScratchPlan::for_model(model_->config(), kv_->n_ctx(), max_batch, pool_->size());
  max_batch_ = max_batch;
  packed_region_ = p.packed_region;
  bool ok = try_resize(x_, p.embd) && try_resize(h_, p.embd) && try_resize(q_, p.q) && try_resize(k_, p.kv) &&
            try_resize(v_, p.kv) && try_resize(attn_, p.q) && try_resize(ffn_a_, p.ffn) && try_resize(ffn_b_, p.ffn) &&
            try_resize(ffn_out_, p.embd) && try_resize(router_, p.router) && try_resize(scores_, p.scores) &&
            try_resize(rope_cos_, p.rope) && try_resize(rope_sin_, p.rope) &&
            try_resize(packed_, static_cast<int64_t>(3 * p.packed_region)) && try_resize(expert_in_, p.embd) &&
            try_resize(expert_out_, p.embd) && try_resize(expert_ids_, p.routes) &&
            try_resize(expert_weights_, p.routes) && try_resize(expert_tokens_, p.batch);
  if (!ok) return Status::error("out of memory allocating activation buffers for a batch of " + std::to_string(max_batch));
  scratch_bytes_ = p.total_bytes();
  return Status::ok();
}

Status ForwardPass::forward(int slot, std::span<const int32_t> tokens, bool all_logits, float* logits) {
  const ModelConfig& c = model_->config();
  if (slot < 0 || slot >= kv_->n_slots()) return Status::error("sequence slot out of range");
  if (tokens.empty()) return Status::error("no tokens to evaluate");
  const int64_t pos_start = kv_->length(slot);
  if (pos_start + static_cast<int64_t>(tokens.size()) > kv_->n_ctx()) {
    return Status::error("context is full: " + std::to_string(pos_start) + " + " + std::to_string(tokens.size()) +
                         " tokens exceed the context length of " + std::to_string(kv_->n_ctx()) +
                         " (use a larger --context)");
  }
  for (int32_t t : tokens) {
    if (t < 0 || t >= c.n_vocab) {
      return Status::error("token id " + std::to_string(t) + " is outside the vocabulary (0.." +
                           std::to_string(c.n_vocab - 1) + ")");
    }
  }
  const ModelWeights& w = model_->weights();
  for (size_t done = 0; done < tokens.size();) {
    const int64_t n = std::min<int64_t>(max_batch_, static_cast<int64_t>(tokens.size() - done));
    const int64_t pos0 = kv_->length(slot);
    embed(tokens.subspan(done, static_cast<size_t>(n)));
    for (int64_t il = 0; il < c.n_layer; ++il) {
      const LayerWeights& l = w.layers[static_cast<size_t>(il)];
      attention_block(l, il, slot, pos0, n);
      ffn_block(l, n);
    }
    kv_->set_length(slot, pos0 + n);
    const bool last_chunk = done + static_cast<size_t>(n) == tokens.size();
    if (all_logits || last_chunk) {
      const int64_t first = all_logits ? 0 : n - 1;
      const int64_t n_out = n - first;
      {
        ScopedOpTimer t2(profile_, OpKind::Norm);
        rms_norm_rows(x_.data() + first * c.n_embd, w.output_norm.data, h_.data(), n_out);
      }
      float* dst = all_logits ? logits + static_cast<int64_t>(done) * c.n_vocab : logits;
      matmul(w.output, 0, h_.data(), n_out, dst, OpKind::Output);
      if (c.final_softcap > 0.0f) kernels::softcap(dst, n_out * c.n_vocab, c.final_softcap);
    }
    done += static_cast<size_t>(n);
  }
  return Status::ok();
}

void ForwardPass::embed(std::span<const int32_t> tokens) {
  ScopedOpTimer timer(profile_, OpKind::Embed);
  const WeightMatrix& e = model_->weights().token_embd;
  const int64_t E = model_->config().n_embd;
  const float scale = model_->config().embd_scale;
  for (size_t i = 0; i < tokens.size(); ++i) {
    float* x = x_.data() + static_cast<int64_t>(i) * E;
    kernels::dequantize_row(e.type, e.row(tokens[i]), x, E);
    if (scale != 1.0f) {
      for (int64_t j = 0; j < E; ++j) x[j] *= scale;
    }
  }
}

void ForwardPass::rms_norm_rows(const float* x, const float* w, float* y, int64_t n) {
  const ModelConfig& c = model_->config();
  for (int64_t t = 0; t < n; ++t) kernels::rms_norm(x + t * c.n_embd, w, y + t * c.n_embd, c.n_embd, c.rms_eps);
}

void ForwardPass::attention_block(const LayerWeights& l, int64_t layer, int slot, int64_t pos0, int64_t n) {
  const ModelConfig& c = model_->config();
  const int64_t E = c.n_embd, Q = c.n_embd_q(), KV = c.n_embd_kv(), hd = c.head_dim;
  {
    ScopedOpTimer timer(profile_, OpKind::Norm);
    rms_norm_rows(x_.data(), l.attn_norm.data, h_.data(), n);
  }
  {
    const WeightMatrix* ws[] = {&l.wq, &l.wk, &l.wv};
    float* ys[] = {q_.data(), k_.data(), v_.data()};
    matmul_shared_input(ws, h_.data(), n, ys);
  }
  {
    ScopedOpTimer timer(profile_, OpKind::Rope);
    const bool neox = c.rope_layout == RopeLayout::Neox;
    const int64_t half = c.n_rot / 2;
    for (int64_t t = 0; t < n; ++t) {
      if (l.bq.present()) kernels::add(q_.data() + t * Q, l.bq.data, Q);
      if (l.bk.present()) kernels::add(k_.data() + t * KV, l.bk.data, KV);
      if (l.bv.present()) kernels::add(v_.data() + t * KV, l.bv.data, KV);
      float* cs = rope_cos_.data() + t * half;
      float* sn = rope_sin_.data() + t * half;
      if (layer == 0) kernels::rope_angles(pos0 + t, c.n_rot, rope_, cs, sn);
      kernels::rope_apply(q_.data() + t * Q, c.n_head, hd, c.n_rot, cs, sn, neox);
      kernels::rope_apply(k_.data() + t * KV, c.n_head_kv, hd, c.n_rot, cs, sn, neox);
      kernels::to_fp16(k_.data() + t * KV, kv_->key(slot, layer, pos0 + t), KV);
      kernels::to_fp16(v_.data() + t * KV, kv_->value(slot, layer, pos0 + t), KV);
    }
  }
  {
    ScopedOpTimer timer(profile_, OpKind::Attention);
    const int64_t group = c.n_head / c.n_head_kv;
    const int64_t items = n * c.n_head;
    const int64_t n_ctx = kv_->n_ctx();
    const bool windowed = c.uses_sliding_window(layer);
    pool_->run([&](int ith, int nth) {
      float* scores = scores_.data() + ith * n_ctx;
      for (int64_t item = ith; item < items; item += nth) {
        const int64_t t = item / c.n_head, h = item % c.n_head;
        const int64_t kvh = h / group;
        const int64_t pos = pos0 + t;
        const int64_t first = windowed ? std::max<int64_t>(0, pos - c.n_swa + 1) : 0;
        kernels::attention_head_f16(q_.data() + t * Q + h * hd, kv_->key(slot, layer, first) + kvh * hd,
                                    kv_->value(slot, layer, first) + kvh * hd, KV, pos - first + 1, hd,
                                    c.attn_scale, scores, attn_.data() + t * Q + h * hd, c.attn_softcap);
      }
    });
  }
  matmul(l.wo, 0, attn_.data(), n, h_.data());
  if (l.attn_post_norm.present()) {
    ScopedOpTimer timer(profile_, OpKind::Norm);
    rms_norm_rows(h_.data(), l.attn_post_norm.data, h_.data(), n);
  }
  kernels::add(x_.data(), h_.data(), n * E);
}

void ForwardPass::ffn_block(const LayerWeights& l, int64_t n) {
  const int64_t E = model_->config().n_embd;
  {
    ScopedOpTimer timer(profile_, OpKind::Norm);
    rms_norm_rows(x_.data(), l.ffn_norm.data, h_.data(), n);
  }
  if (model_->config().is_moe()) moe_ffn(l, n);
  else dense_ffn(l, n);
  if (l.ffn_post_norm.present()) {
    ScopedOpTimer timer(profile_, OpKind::Norm);
    rms_norm_rows(ffn_out_.data(), l.ffn_post_norm.data, ffn_out_.data(), n);
  }
  kernels::add(x_.data(), ffn_out_.data(), n * E);
}

void ForwardPass::dense_ffn(const LayerWeights& l, int64_t n) {
  const WeightMatrix* ws[] = {&l.ffn_gate, &l.ffn_up};
  float* ys[] = {ffn_a_.data(), ffn_b_.data()};
  matmul_shared_input(ws, h_.data(), n, ys);
  {
    ScopedOpTimer timer(profile_, OpKind::Ffn);
    if (model_->config().ffn_activation == FfnActivation::GeluTanh) {
      kernels::geglu(ffn_a_.data(), ffn_b_.data(), n * l.ffn_gate.rows);
    } else {
      kernels::swiglu(ffn_a_.data(), ffn_b_.data(), n * l.ffn_gate.rows);
    }
  }
  matmul(l.ffn_down, 0, ffn_a_.data(), n, ffn_out_.data());
}

void ForwardPass::expert_swiglu(const WeightMatrix& gate, const WeightMatrix& up, const WeightMatrix& down,
                                int64_t expert, const float* in, int64_t n, float* out) {
  matmul(gate, expert, in, n, ffn_a_.data());
  matmul(up, expert, in, n, ffn_b_.data());
  {
    ScopedOpTimer timer(profile_, OpKind::Ffn);
    kernels::swiglu(ffn_a_.data(), ffn_b_.data(), n * gate.rows);
  }
  matmul(down, expert, ffn_a_.data(), n, out);
}

void ForwardPass::moe_ffn(const LayerWeights& l, int64_t n) {
  const ModelConfig& c = model_->config();
  const int64_t E = c.n_embd, X = c.n_expert, K = c.n_expert_used;
  matmul(l.ffn_gate_inp, 0, h_.data(), n, router_.data());
  {
    // Softmax over all experts, keep the top K (ties: lower index), optionally renormalize.
    ScopedOpTimer timer(profile_, OpKind::Moe);
    std::vector<int32_t> order(static_cast<size_t>(X));
    for (int64_t t = 0; t < n; ++t) {
      float* p = router_.data() + t * X;
      kernels::softmax_exact(p, X);
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + K, order.end(),
                        [&](int32_t a, int32_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
      float sum = 0.0f;
      for (int64_t j = 0; j < K; ++j) sum += p[order[static_cast<size_t>(j)]];
      for (int64_t j = 0; j < K; ++j) {
        const int32_t e = order[static_cast<size_t>(j)];
        expert_ids_[static_cast<size_t>(t * K + j)] = e;
        expert_weights_[static_cast<size_t>(t * K + j)] =
            c.gating == ExpertGating::SoftmaxTopKRenormalized ? p[e] / sum : p[e];
      }
    }
  }
  std::fill(ffn_out_.begin(), ffn_out_.begin() + n * E, 0.0f);
  for (int64_t e = 0; e < X; ++e) {
    // Gather the tokens routed to expert e, run it once on all of them, scatter back weighted.
    int64_t m = 0;
    for (int64_t t = 0; t < n; ++t) {
      for (int64_t j = 0; j < K; ++j) {
        if (expert_ids_[static_cast<size_t>(t * K + j)] != e) continue;
        std::copy_n(h_.data() + t * E, E, expert_in_.data() + m * E);
        expert_tokens_[static_cast<size_t>(m)] = t * K + j;
        ++m;
      }
    }
    if (m == 0) continue;
    expert_swiglu(l.ffn_gate_exps, l.ffn_up_exps, l.ffn_down_exps, e, expert_in_.data(), m, expert_out_.data());
    for (int64_t i = 0; i < m; ++i) {
      const int64_t slot = expert_tokens_[static_cast<size_t>(i)];
      kernels::add_scaled(ffn_out_.data() + (slot / K) * E, expert_out_.data() + i * E, E,
                          expert_weights_[static_cast<size_t>(slot)]);
    }
  }
  if (l.ffn_gate_shexp.present()) {
    expert_swiglu(l.ffn_gate_shexp, l.ffn_up_shexp, l.ffn_down_shexp, 0, h_.data(), n, expert_out_.data());
    for (int64_t t = 0; t < n; ++t) {
      const float* ht = h_.data() + t * E;
      float dot = 0.0f;
      for (int64_t i = 0; i < E; ++i) dot += l.ffn_gate_inp_shexp.data[i] * ht[i];
      const float gate = 1.0f / (1.0f + std::exp(-dot));
      kernels::add_scaled(ffn_out_.data() + t * E, expert_out_.data() + t * E, E, gate);
    }
  }
}

void ForwardPass::matmul(const WeightMatrix& w, int64_t index, const float* x, int64_t n, float* y, OpKind kind) {
  const WeightMatrix view{w.tensor, w.type, w.matrix(index), w.cols, w.rows, 1, w.row_bytes};
  const WeightMatrix* ws[] = {&view};
  float* ys[] = {y};
  matmul_shared_input(ws, x, n, ys, kind);
}

void ForwardPass::matmul_shared_input(std::span<const WeightMatrix* const> ws, const float* x, int64_t n,
                                      std::span<float* const> ys, OpKind kind) {
  ScopedOpTimer timer(profile_, kind);
  const int64_t k = ws[0]->cols;
  // Pack the input once per weight type (most often all share one).
  void* packed[3] = {};
  for (size_t i = 0; i < ws.size(); ++i) {
    for (size_t j = 0; j < i && !packed[i]; ++j) {
      if (ws[j]->type == ws[i]->type) packed[i] = packed[j];
    }
    if (packed[i]) continue;
    packed[i] = packed_.data() + i * packed_region_;
    if (n < 4) {
      kernels::pack_activations(ws[i]->type, x, k, n, packed[i], 0, n);
    } else {
      void* dst = packed[i];
      const kernels::GgmlType type = ws[i]->type;
      pool_->run([&](int ith, int nth) {
        const int64_t per = (n + nth - 1) / nth;
        const int64_t t0 = std::min<int64_t>(n, per * ith), t1 = std::min<int64_t>(n, t0 + per);
        if (t0 < t1) kernels::pack_activations(type, x, k, n, dst, t0, t1);
      });
    }
  }
  int64_t total_rows = 0;
  for (const WeightMatrix* w : ws) total_rows += w->rows;
  pool_->run([&](int ith, int nth) {
    auto [begin, end] = thread_range(total_rows, ith, nth);
    int64_t base = 0;
    for (size_t i = 0; i < ws.size(); ++i) {
      const WeightMatrix& w = *ws[i];
      const int64_t r0 = std::max<int64_t>(begin - base, 0), r1 = std::min<int64_t>(end - base, w.rows);
      if (r0 < r1) kernels::matmul_rows(w.type, w.data, k, packed[i], n, ys[i], w.rows, r0, r1);
      base += w.rows;
    }
  });
}

}  // namespace inferscope
