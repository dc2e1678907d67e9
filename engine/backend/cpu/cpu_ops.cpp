#include "engine/backend/cpu/cpu_ops.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/delta_net.h"
#include "kernels/cpu/dequantize.h"
#include "kernels/cpu/kv_quant.h"
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

// fn(t0, t1) over the rows [0, n), split across the pool's threads (a single row runs on the
// calling thread: no dispatch for decode). For ops whose rows are independent.
template <class F>
void for_rows(ThreadPool& pool, int64_t n, F&& fn) {
  if (n < 2) {
    fn(int64_t{0}, n);
    return;
  }
  pool.run([&](int ith, int nth) {
    const int64_t t0 = n * ith / nth, t1 = n * (ith + 1) / nth;
    if (t0 < t1) fn(t0, t1);
  });
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

// Matrix `index` of a stack of expert matrices, as a matrix of its own.
WeightMatrix single_matrix(const WeightMatrix& w, int64_t index) {
  return WeightMatrix{w.tensor, w.type, w.matrix(index), w.cols, w.rows, 1, w.row_bytes};
}

// Query heads of one GQA group per attention work item: the whole group (the kernel shares each
// decoded K/V tile among them), fewer when the items would not keep every thread busy.
int64_t heads_per_item(int64_t group, int64_t units, int threads) {
  int64_t per = group;
  while (per > 1 && units * ((group + per - 1) / per) < threads) per = (per + 1) / 2;
  return per;
}

// The positions a query at `pos` sees, as KvRows reads them: rows [0, sinks) are positions
// [0, sinks), rows [sinks, count) positions start + sinks ...
struct VisibleRows {
  int64_t start = 0, sinks = 0, count = 0;
};

VisibleRows visible_rows(const AttentionShape& shape, int64_t pos) {
  const int64_t first = shape.window > 0 ? std::max<int64_t>(0, pos - shape.window + 1) : 0;
  const int64_t sinks = std::min(shape.sinks, first);  // all visible once the window reaches them
  return {first - sinks, sinks, pos - first + 1 + sinks};
}

}  // namespace

CpuOps::CpuOps(std::shared_ptr<const Model> model, ThreadPool& pool) : model_(std::move(model)), pool_(pool) {}

Status CpuOps::allocate(const ForwardPlan& plan) {
  const ModelConfig& c = model_->config();
  plan_ = plan;
  auto kv = KvCache::create(plan.kv);
  if (!kv) return kv.status();
  kv_ = std::move(*kv);
  const ActivationPlan& p = plan.acts;
  bool ok = true;
  for (size_t a = 0; a < kActCount; ++a) {
    if (static_cast<Act>(a) != Act::Logits) ok = ok && try_resize(acts_[a], p.acts[a].floats());
  }
  ok = ok && try_resize(scores_, p.scores) && try_resize(rope_cos_, p.rope) && try_resize(rope_sin_, p.rope) &&
       try_resize(packed_, static_cast<int64_t>(kPackedRegions * p.packed_region)) && try_resize(expert_ids_, p.routes) &&
       try_resize(expert_weights_, p.routes) && try_resize(expert_rows_, p.expert_rows) &&
       try_resize(gathered_routes_, p.batch) && try_resize(expert_order_, std::max<int64_t>(1, c.n_expert)) &&
       try_resize(row_pos_, p.batch) && try_resize(row_span_last_, p.batch) && try_resize(row_blocks_, p.batch) &&
       try_resize(row_window_blocks_, p.batch) && try_resize(attention_runs_, p.batch) && try_resize(row_visible_, p.batch) &&
       try_resize(rotate_rows_, int64_t(pool_.size()) * c.n_embd_kv()) &&
       try_resize(recurrent_states_, plan.recurrent.floats_per_state() * plan.recurrent.n_states()) &&
       try_resize(delta_net_scratch_, plan.recurrent.empty() ? 0 : pool_.size() * kernels::delta_net_chunk_scratch(c.delta_net.head_dim));
  if (!ok) return Status::error("out of memory allocating activation buffers for a batch of " + std::to_string(p.batch));
  scratch_bytes_ = p.host_bytes();
  return Status::ok();
}

float* CpuOps::act(Act a) { return a == Act::Logits ? logits_ : acts_[static_cast<size_t>(a)].data(); }

// Each row's position and block table, and the RoPE angles of its position, shared by every
// layer.
Status CpuOps::begin_chunk(const Chunk& chunk) {
  logits_ = chunk.logits;
  batching_ = chunk.batch_invariant ? kernels::TokenBatching::Invariant : kernels::TokenBatching::Fastest;
  const bool window_rope = model_->config().has_swa_rope;
  int64_t row = 0;
  for (const ChunkSpan& span : chunk.spans) {
    for (int64_t t = 0; t < span.n; ++t, ++row) {
      row_pos_[static_cast<size_t>(row)] = span.pos0 + t;
      row_span_last_[static_cast<size_t>(row)] = span.pos0 + span.n - 1;
      row_blocks_[static_cast<size_t>(row)] = span.blocks.data();
      row_window_blocks_[static_cast<size_t>(row)] = span.window_blocks.data();
      for (LayerRope which : {LayerRope::Full, LayerRope::SlidingWindow}) {
        if (which == LayerRope::SlidingWindow && !window_rope) break;
        const RopeTable table = rope_table(which);
        const int64_t at = table.offset + row * (table.n_rot / 2);
        kernels::rope_angles(span.pos0 + t, table.n_rot, plan_.rope_of(which), rope_cos_.data() + at,
                             rope_sin_.data() + at);
      }
    }
  }
  return Status::ok();
}

// The full layers' table first, then the window layers' (ActivationPlan::rope).
CpuOps::RopeTable CpuOps::rope_table(LayerRope which) const {
  const ModelConfig& c = model_->config();
  const int64_t offset = which == LayerRope::SlidingWindow ? plan_.acts.batch * (c.n_rot / 2) : 0;
  return {offset, c.rope_n_rot(which), c.rope_head_dim(which)};
}

Status CpuOps::embed(std::span<const int32_t> tokens, OpLabel label) {
  return lookup(model_->weights().token_embd, tokens, model_->config().embd_scale, Act::X, label);
}

Status CpuOps::lookup(const WeightMatrix& table, std::span<const int32_t> tokens, float s, Act out, OpLabel label) {
  ScopedOpTimer timer(profile(), label.kind, label.layer);
  const int64_t width = table.cols;
  for (size_t i = 0; i < tokens.size(); ++i) {
    float* x = act(out) + static_cast<int64_t>(i) * width;
    kernels::dequantize_row(table.type, table.row(tokens[i]), x, width);
    if (s != 1.0f) {
      for (int64_t j = 0; j < width; ++j) x[j] *= s;
    }
  }
  return Status::ok();
}

Status CpuOps::scale(Act x, int64_t n, int64_t width, float s, OpLabel label) {
  ScopedOpTimer timer(profile(), label.kind, label.layer);
  float* rows = act(x);
  for (int64_t i = 0; i < n * width; ++i) rows[i] *= s;
  return Status::ok();
}

Status CpuOps::mul_columns(Act dst, Act src, int64_t src_col0, int64_t n, int64_t width, OpLabel label) {
  ScopedOpTimer timer(profile(), label.kind, label.layer);
  const int64_t stride = plan_.acts[src].width;
  for (int64_t t = 0; t < n; ++t) {
    float* d = act(dst) + t * width;
    const float* s = act(src) + t * stride + src_col0;
    for (int64_t i = 0; i < width; ++i) d[i] *= s[i];
  }
  return Status::ok();
}

Status CpuOps::carry_hidden(Act in, const Chunk& chunk, bool keep_last, OpLabel label) {
  ScopedOpTimer timer(profile(), label.kind, label.layer);
  const int64_t E = model_->config().n_embd;
  float* out = act(Act::MtpHidden);
  const float* rows = act(in);
  int64_t row0 = 0;
  for (const ChunkSpan& span : chunk.spans) {
    float* carried = state(span.slot) + plan_.recurrent.carry_offset();
    if (span.pos0 == 0) std::fill_n(carried, E, 0.0f);
    std::copy_n(carried, E, out + row0 * E);
    if (span.n > 1) std::copy_n(rows + row0 * E, (span.n - 1) * E, out + (row0 + 1) * E);
    if (keep_last) std::copy_n(rows + (row0 + span.n - 1) * E, E, carried);
    for (int64_t r = 0; chunk.keep_row_states && r < std::min<int64_t>(span.n, plan_.recurrent.n_row_states); ++r) {
      std::copy_n(rows + (row0 + r) * E, E, state(plan_.recurrent.row_state(r)) + plan_.recurrent.carry_offset());
    }
    row0 += span.n;
  }
  return Status::ok();
}

Status CpuOps::copy_columns(Act dst, int64_t dst_col0, Act src, int64_t n, int64_t width, OpLabel label) {
  ScopedOpTimer timer(profile(), label.kind, label.layer);
  const int64_t stride = plan_.acts[dst].width;
  for (int64_t t = 0; t < n; ++t) std::copy_n(act(src) + t * width, width, act(dst) + t * stride + dst_col0);
  return Status::ok();
}

Status CpuOps::rms_norm(Act in, int64_t in_row0, const WeightVector& w, Act out, int64_t n, Feeds, OpLabel label) {
  ScopedOpTimer timer(profile(), label.kind, label.layer);
  const ModelConfig& c = model_->config();
  const int64_t width = w.size;
  const float* x = act(in) + in_row0 * width;
  float* y = act(out);
  for_rows(pool_, n, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      kernels::rms_norm(x + t * width, w.data, y + t * width, width, c.rms_eps);
    }
  });
  return Status::ok();
}

Status CpuOps::layer_norm(Act in, int64_t in_row0, const WeightVector& w, const WeightVector& b, Act out, int64_t n,
                          Feeds, OpLabel label) {
  ScopedOpTimer timer(profile(), label.kind, label.layer);
  const ModelConfig& c = model_->config();
  const float* x = act(in) + in_row0 * c.n_embd;
  float* y = act(out);
  for_rows(pool_, n, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      kernels::layer_norm(x + t * c.n_embd, w.data, b.data, y + t * c.n_embd, c.n_embd, c.norm_eps);
    }
  });
  return Status::ok();
}

Status CpuOps::add_rows(const WeightMatrix& table, std::span<const int32_t> rows, OpLabel label) {
  ScopedOpTimer timer(profile(), label.kind, label.layer);
  const int64_t E = model_->config().n_embd;
  for (size_t i = 0; i < rows.size(); ++i) {
    float* row = act(Act::H) + static_cast<int64_t>(i) * E;
    kernels::dequantize_row(table.type, table.row(rows[i]), row, E);
    kernels::add(act(Act::X) + static_cast<int64_t>(i) * E, row, E);
  }
  return Status::ok();
}

Status CpuOps::matmul(std::span<const MatmulOutput> outputs, Act in, int64_t n, OpLabel label) {
  ScopedOpTimer timer(profile(), label.kind, label.layer);
  if (matmul_observer_) matmul_observer_(outputs, act(in), n);
  const WeightMatrix* ws[kPackedRegions] = {};
  float* ys[kPackedRegions] = {};
  if (outputs.size() > kPackedRegions) return Status::error("internal: at most four products share an input");
  for (size_t i = 0; i < outputs.size(); ++i) {
    ws[i] = outputs[i].w;
    ys[i] = act(outputs[i].out);
  }
  matmul_shared_input(std::span(ws, outputs.size()), act(in), n, std::span(ys, outputs.size()), label.layer);
  return Status::ok();
}

void CpuOps::matmul_shared_input(std::span<const WeightMatrix* const> ws, const float* x, int64_t n,
                                 std::span<float* const> ys, int64_t layer) {
  const int64_t k = ws[0]->cols;
  const size_t region = plan_.acts.packed_region;
  const float llm_int8 = model_->weights().llm_int8_threshold;
  auto decomposed = [llm_int8](const WeightMatrix& w) { return llm_int8 > 0 && w.i8 != nullptr; };
  // Pack the input once per weight type (most often all share one); LLM.int8() decomposes it.
  void* packed[kPackedRegions] = {};
  bool prepared = false;
  for (size_t i = 0; i < ws.size(); ++i) {
    if (decomposed(*ws[i])) {
      if (!prepared) {
        kernels::prepare_llm_int8(x, k, n, llm_int8, llm_int8_);
        profile().count_outliers(layer, llm_int8_.outliers.size(), static_cast<uint64_t>(k));
        prepared = true;
      }
      continue;
    }
    for (size_t j = 0; j < i && !packed[i]; ++j) {
      if (ws[j]->type == ws[i]->type) packed[i] = packed[j];
    }
    if (packed[i]) continue;
    packed[i] = packed_.data() + i * region;
    if (n < 4) {
      kernels::pack_activations(ws[i]->type, x, k, n, packed[i], 0, n);
    } else {
      void* dst = packed[i];
      const kernels::GgmlType type = ws[i]->type;
      pool_.run([&](int ith, int nth) {
        const int64_t per = (n + nth - 1) / nth;
        const int64_t t0 = std::min<int64_t>(n, per * ith), t1 = std::min<int64_t>(n, t0 + per);
        if (t0 < t1) kernels::pack_activations(type, x, k, n, dst, t0, t1);
      });
    }
  }
  int64_t total_rows = 0;
  for (const WeightMatrix* w : ws) total_rows += w->rows;
  pool_.run([&](int ith, int nth) {
    auto [begin, end] = thread_range(total_rows, ith, nth);
    int64_t base = 0;
    for (size_t i = 0; i < ws.size(); ++i) {
      const WeightMatrix& w = *ws[i];
      const int64_t r0 = std::max<int64_t>(begin - base, 0), r1 = std::min<int64_t>(end - base, w.rows);
      if (r0 < r1 && decomposed(w)) {
        kernels::llm_int8_rows(w.i8, w.row_scales, llm_int8_, ys[i], w.rows, r0, r1);
      } else if (r0 < r1) {
        kernels::matmul_rows(w.type, w.data, k, packed[i], n, ys[i], w.rows, r0, r1, batching_);
      }
      base += w.rows;
    }
  });
}

Status CpuOps::add_bias(Act x, const WeightVector& bias, int64_t n, OpLabel label) {
  ScopedOpTimer timer(profile(), label.kind, label.layer);
  for (int64_t t = 0; t < n; ++t) kernels::add(act(x) + t * bias.size, bias.data, bias.size);
  return Status::ok();
}

Status CpuOps::rope(const Chunk& chunk, LayerRope which, OpLabel label) {
  ScopedOpTimer timer(profile(), label.kind, label.layer);
  const ModelConfig& c = model_->config();
  const RopeTable table = rope_table(which);
  const int64_t Q = table.head_dim * c.n_head, KV = table.head_dim * c.n_head_kv, half = table.n_rot / 2;
  const bool neox = c.rope_layout == RopeLayout::Neox;
  float* q = act(Act::Q);
  float* k = act(Act::K);
  for_rows(pool_, chunk.n, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const float* cs = rope_cos_.data() + table.offset + t * half;
      const float* sn = rope_sin_.data() + table.offset + t * half;
      kernels::rope_apply(q + t * Q, c.n_head, table.head_dim, table.n_rot, cs, sn, neox);
      const float temperature =
          kernels::query_temperature(plan_.rope_of(which), static_cast<float>(row_pos_[static_cast<size_t>(t)]));
      if (temperature != 1.0f) {
        for (int64_t i = 0; i < Q; ++i) q[t * Q + i] *= temperature;
      }
      kernels::rope_apply(k + t * KV, c.n_head_kv, table.head_dim, table.n_rot, cs, sn, neox);
    }
  });
  return Status::ok();
}

// Per row of the chunk: the block table `layer`'s pool reads it through.
const std::vector<const BlockId*>& CpuOps::blocks_of_rows(int64_t layer) const {
  return kv_->layout().pool_of(layer) == KvPool::Window ? row_window_blocks_ : row_blocks_;
}

Status CpuOps::kv_store(int64_t layer, const Chunk& chunk, OpLabel label) {
  ScopedOpTimer timer(profile(), label.kind, label.layer);
  const int64_t KV = model_->config().layer_kv_width(layer);
  const KvLayout& kv = kv_->layout();
  const float* k = act(Act::K);
  const float* v = act(Act::V);
  const std::vector<const BlockId*>& tables = blocks_of_rows(layer);
  for_rows(pool_, chunk.n, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t x = row_pos_[static_cast<size_t>(t)];
      const int64_t row =
          int64_t(tables[static_cast<size_t>(t)][x / kv.block_size]) * kv.block_size + x % kv.block_size;
      kernels::kv_quantize_row(kv.types.k, k + t * KV, kv_->key(layer, row), KV);
      kernels::kv_quantize_row(kv.types.v, v + t * KV, kv_->value(layer, row), KV);
    }
  });
  return Status::ok();
}

int64_t CpuOps::group_attention_rows(const AttentionShape& shape, int64_t n, int64_t max_run) {
  int64_t runs = 0;
  for (int64_t t = 0; t < n; ++t) {
    const auto row = static_cast<size_t>(t);
    const VisibleRows seen = visible_rows(shape, shape.causal ? row_pos_[row] : row_span_last_[row]);
    row_visible_[row] = seen.count;
    AttentionRun* last = runs > 0 ? &attention_runs_[static_cast<size_t>(runs - 1)] : nullptr;
    if (last && last->n < max_run && row_blocks_[static_cast<size_t>(last->row0)] == row_blocks_[row] &&
        last->start == seen.start && last->sinks == seen.sinks) {
      ++last->n;
    } else {
      attention_runs_[static_cast<size_t>(runs++)] = {t, 1, seen.start, seen.sinks};
    }
  }
  return runs;
}

Status CpuOps::attention(int64_t layer, const Chunk& chunk, const AttentionShape& shape, Feeds, OpLabel label) {
  ScopedOpTimer timer(profile(), label.kind, label.layer);
  const ModelConfig& c = model_->config();
  const int64_t Q = c.layer_q_width(layer), hd = c.layer_head_dim(layer);
  const int64_t group = c.n_head / c.n_head_kv;
  const KvLayout& kv = kv_->layout();
  const int64_t max_run = std::max<int64_t>(1, kernels::kAttentionQueryBlock / group);  // tokens sharing a tile
  const int64_t runs = group_attention_rows(shape, chunk.n, max_run);
  const int64_t per = heads_per_item(group, runs * c.n_head_kv, pool_.size());
  const int64_t parts = (group + per - 1) / per;  // items per (run, KV head)
  const int64_t items = runs * c.n_head_kv * parts;
  const int64_t per_thread = kernels::attention_scratch_floats(plan_.n_ctx, hd);
  const int block_shift = std::countr_zero(static_cast<uint32_t>(kv.block_size));
  const float* q = act(Act::Q);
  float* out = act(Act::Attn);
  const std::vector<const BlockId*>& tables = blocks_of_rows(layer);
  pool_.run([&](int ith, int nth) {
    float* scratch = scores_.data() + ith * per_thread;
    for (int64_t item = ith; item < items; item += nth) {
      // KV head outermost: a thread's consecutive items read the same head's rows (in L2).
      const AttentionRun& run = attention_runs_[static_cast<size_t>(item / parts % runs)];
      const int64_t kvh = item / (parts * runs), part = item % parts;
      const BlockId* blocks = tables[static_cast<size_t>(run.row0)];
      const kernels::KvRows k{kv.types.k, kv_->key(layer, 0), kv.k_row_bytes(), kvh * hd,
                              blocks, block_shift, run.start, run.sinks};
      const kernels::KvRows v{kv.types.v, kv_->value(layer, 0), kv.v_row_bytes(), kvh * hd,
                              blocks, block_shift, run.start, run.sinks};
      const int64_t h0 = kvh * group + part * per;
      const int64_t q0 = run.row0 * Q + h0 * hd;
      const kernels::AttentionQueries queries{q + q0, hd, Q, std::min(per, kvh * group + group - h0), run.n,
                                              row_visible_.data() + run.row0, out + q0, hd, Q};
      kernels::AttentionQueries queries_with_sinks = queries;
      if (shape.sink_logits) queries_with_sinks.sinks = shape.sink_logits->data + h0;
      kernels::attention_tokens(queries_with_sinks, k, v, hd, shape.scale, shape.softcap, scratch);
    }
  });
  return Status::ok();
}

// Row by row: the element-wise kernels' SIMD body and scalar tail (whose exp / tanh round
// differently) then cut every row alike, so a row's values do not depend on the rows before it.
void CpuOps::glu_rows(FfnActivation activation, float* a, const float* b, int64_t n, int64_t width) {
  for (int64_t t = 0; t < n; ++t) {
    if (activation == FfnActivation::GeluTanh) {
      kernels::geglu(a + t * width, b + t * width, width);
    } else if (activation == FfnActivation::SwigluOai) {
      kernels::swiglu_oai(a + t * width, b + t * width, width);
    } else if (activation == FfnActivation::Sigmoid) {
      kernels::sigmoid_gate(a + t * width, b + t * width, width);
    } else {
      kernels::swiglu(a + t * width, b + t * width, width);
    }
  }
}

Status CpuOps::glu(FfnActivation activation, Act gate, Act up, int64_t rows, int64_t width, Feeds, OpLabel label) {
  ScopedOpTimer timer(profile(), label.kind, label.layer);
  glu_rows(activation, act(gate), act(up), rows, width);
  return Status::ok();
}

Status CpuOps::activate(FfnActivation activation, Act x, int64_t n, int64_t width, Feeds, OpLabel label) {
  ScopedOpTimer timer(profile(), label.kind, label.layer);
  if (activation != FfnActivation::GeluTanh) return Status::error("cpu: activate supports GELU only");
  kernels::gelu(act(x), n * width);
  return Status::ok();
}

Status CpuOps::add(Act dst, Act src, int64_t n, int64_t width, OpLabel label) {
  ScopedOpTimer timer(profile(), label.kind, label.layer);
  kernels::add(act(dst), act(src), n * width);
  return Status::ok();
}

Status CpuOps::softcap(Act x, int64_t n, int64_t width, float cap, OpLabel label) {
  ScopedOpTimer timer(profile(), label.kind, label.layer);
  for (int64_t t = 0; t < n; ++t) kernels::softcap(act(x) + t * width, width, cap);
  return Status::ok();
}

Status CpuOps::add_expert_bias(Act x, const WeightMatrix& bias, int64_t n, int64_t k, OpLabel label) {
  ScopedOpTimer timer(profile(), label.kind, label.layer);
  const int64_t width = bias.cols;
  float* rows = act(x);
  for (int64_t route = 0; route < n * k; ++route) {
    const auto* b = reinterpret_cast<const float*>(bias.row(expert_ids_[static_cast<size_t>(route)]));
    kernels::add(rows + route * width, b, width);
  }
  return Status::ok();
}

Status CpuOps::moe_route(int64_t n, int64_t n_expert, int64_t k, bool renormalize, OpLabel label) {
  ScopedOpTimer timer(profile(), label.kind, label.layer);
  for (int64_t t = 0; t < n; ++t) {
    kernels::moe_top_k(act(Act::Router) + t * n_expert, n_expert, k, renormalize, expert_order_.data(),
                       expert_ids_.data() + t * k, expert_weights_.data() + t * k);
  }
  profile().count_experts(label.layer, n_expert, expert_ids_.data(), n * k);
  return Status::ok();
}

// Expert by expert: gathers the input rows of the routes to it, runs its matrices once on all of
// them (the outputs sharing the packed input), and puts each output row in its route's row.
Status CpuOps::matmul_experts(std::span<const MatmulOutput> outputs, Act in, ExpertInput input, int64_t n, int64_t k,
                              OpLabel label) {
  ScopedOpTimer timer(profile(), label.kind, label.layer);
  if (outputs.empty() || outputs.size() > 2) return Status::error("internal: one or two expert products share an input");
  const int64_t cols = outputs[0].w->cols;
  const int64_t region = plan_.acts.expert_rows / 3;
  float* gathered = expert_rows_.data();
  float* produced[2] = {gathered + region, gathered + 2 * region};
  const float* x = act(in);
  for (int64_t e = 0; e < outputs[0].w->n_mats; ++e) {
    int64_t m = 0;
    for (int64_t route = 0; route < n * k; ++route) {
      if (expert_ids_[static_cast<size_t>(route)] != e) continue;
      const int64_t row = input == ExpertInput::PerToken ? route / k : route;
      std::copy_n(x + row * cols, cols, gathered + m * cols);
      gathered_routes_[static_cast<size_t>(m++)] = route;
    }
    if (m == 0) continue;
    WeightMatrix matrices[2];
    const WeightMatrix* ws[2] = {};
    for (size_t o = 0; o < outputs.size(); ++o) {
      matrices[o] = single_matrix(*outputs[o].w, e);
      ws[o] = &matrices[o];
    }
    matmul_shared_input(std::span(ws, outputs.size()), gathered, m, std::span(produced, outputs.size()), label.layer);
    for (size_t o = 0; o < outputs.size(); ++o) {
      const int64_t width = outputs[o].w->rows;
      float* dst = act(outputs[o].out);
      for (int64_t i = 0; i < m; ++i) {
        std::copy_n(produced[o] + i * width, width, dst + gathered_routes_[static_cast<size_t>(i)] * width);
      }
    }
  }
  return Status::ok();
}

Status CpuOps::moe_combine(int64_t n, int64_t k, const WeightVector* shared_gate, OpLabel label) {
  ScopedOpTimer timer(profile(), label.kind, label.layer);
  const int64_t E = model_->config().n_embd;
  float* out = act(Act::FfnOut);
  const float* routed = act(Act::ExpertOut);
  std::fill(out, out + n * E, 0.0f);
  for (int64_t t = 0; t < n; ++t) {
    // A token's choices are distinct experts: add them in ascending expert id.
    const int32_t* ids = expert_ids_.data() + t * k;
    for (int32_t done = -1;;) {
      int64_t next = -1;
      for (int64_t j = 0; j < k; ++j) {
        if (ids[j] > done && (next < 0 || ids[j] < ids[next])) next = j;
      }
      if (next < 0) break;
      kernels::add_scaled(out + t * E, routed + (t * k + next) * E, E, expert_weights_[static_cast<size_t>(t * k + next)]);
      done = ids[next];
    }
    if (!shared_gate) continue;
    const float* ht = act(Act::H) + t * E;
    float dot = 0.0f;
    for (int64_t i = 0; i < E; ++i) dot += shared_gate->data[i] * ht[i];
    const float gate = 1.0f / (1.0f + std::exp(-dot));
    kernels::add_scaled(out + t * E, act(Act::SharedOut) + t * E, E, gate);
  }
  return Status::ok();
}

float* CpuOps::conv_state(int slot, int64_t layer) { return state(slot) + plan_.recurrent.layer_offset(layer); }

Status CpuOps::recurrent_copy(std::span<const StateCopy> copies) {
  const int64_t floats = plan_.recurrent.floats_per_state();
  for (const StateCopy& c : copies) std::copy_n(state(c.from), floats, state(c.to));
  return Status::ok();
}

// Channels split across the pool, every row of a span in order.
Status CpuOps::ssm_conv(int64_t layer, const Chunk& chunk, const WeightMatrix& kernel, OpLabel label) {
  ScopedOpTimer timer(profile(), label.kind, label.layer);
  const int64_t channels = kernel.rows, taps = kernel.cols;
  const auto* weights = reinterpret_cast<const float*>(kernel.data);
  float* x = act(Act::Conv);
  for (const ChunkSpan& span : chunk.spans) {
    float* state = conv_state(span.slot, layer);
    if (span.pos0 == 0) std::fill_n(state, plan_.recurrent.conv_floats, 0.0f);
    if (chunk.keep_row_states) {
      keep_conv_row_states(layer, state, x, std::min<int64_t>(span.n, plan_.recurrent.n_row_states), channels, taps - 1);
    }
    pool_.run([&](int ith, int nth) {
      const int64_t c0 = channels * ith / nth, c1 = channels * (ith + 1) / nth;
      kernels::causal_conv_silu(x, span.n, channels, weights, taps, state, c0, c1);
    });
    x += span.n * channels;
  }
  return Status::ok();
}

// Before the convolution: the state after each of the first `rows` rows, the last `kept` inputs
// of the state's then the rows' ([kept][channels], oldest first).
void CpuOps::keep_conv_row_states(int64_t layer, const float* state, const float* inputs, int64_t rows,
                                  int64_t channels, int64_t kept) {
  for (int64_t r = 0; r < rows; ++r) {
    float* out = conv_state(plan_.recurrent.row_state(r), layer);
    for (int64_t j = 0; j < kept; ++j) {
      const int64_t at = r + 1 + j;  // in the state's rows, then the inputs'
      const float* from = at < kept ? state + at * channels : inputs + (at - kept) * channels;
      std::copy_n(from, channels, out + j * channels);
    }
  }
}

// The chunk's q, k, decays and updates made ready at once; then each span's rows, its value
// heads split across the pool: one by one for a decode step or a verification (whose rows
// must equal decoding's), else chunk-wise.
Status CpuOps::delta_net(int64_t layer, const Chunk& chunk, const DeltaNetWeights& w, OpLabel label) {
  ScopedOpTimer timer(profile(), label.kind, label.layer);
  const DeltaNetShape& d = model_->config().delta_net;
  const int64_t channels = d.channels(), hd = d.head_dim, H = d.n_v_heads;
  float* conv = act(Act::Conv);
  float* alpha = act(Act::Alpha);
  float* beta = act(Act::Beta);
  for_rows(pool_, chunk.n, [&](int64_t t0, int64_t t1) {
    kernels::delta_net_prepare(conv + t0 * channels, conv + t0 * channels + d.key_dim(), channels, d.n_k_heads, hd,
                               alpha + t0 * H, beta + t0 * H, H, w.dt->data, w.a->data, t1 - t0,
                               model_->config().rms_eps);
  });
  const int64_t scratch = kernels::delta_net_chunk_scratch(hd);
  int64_t row0 = 0;
  for (const ChunkSpan& span : chunk.spans) {
    float* states = matrix_state(span.slot, layer);
    if (span.pos0 == 0) std::fill_n(states, plan_.recurrent.matrix_floats, 0.0f);
    const bool steps = span.n == 1 || batching_ == kernels::TokenBatching::Invariant;
    pool_.run([&](int ith, int nth) {
      for (int64_t h = H * ith / nth; h < H * (ith + 1) / nth; ++h) {
        const int64_t kh = d.key_head(h);
        const float* first = conv + row0 * channels;
        const kernels::DeltaNetHeadRows rows{first + kh * hd,     first + d.key_dim() + kh * hd,
                                             first + 2 * d.key_dim() + h * hd, channels,
                                             alpha + row0 * H + h, beta + row0 * H + h, H,
                                             act(Act::Attn) + row0 * d.value_dim() + h * hd, d.value_dim()};
        float* state = states + h * hd * hd;
        if (chunk.keep_row_states) {
          delta_net_keeping_row_states(layer, h, rows, span.n, state);
        } else if (steps) {
          kernels::delta_net_steps(rows, span.n, hd, state);
        } else {
          kernels::delta_net_chunks(rows, span.n, hd, state, delta_net_scratch_.data() + ith * scratch);
        }
      }
    });
    row0 += span.n;
  }
  return Status::ok();
}

// One value head's rows one by one, its state after each of the first n_row_states left in
// the row states.
void CpuOps::delta_net_keeping_row_states(int64_t layer, int64_t head, const kernels::DeltaNetHeadRows& rows, int64_t n,
                                          float* state) {
  const int64_t hd = model_->config().delta_net.head_dim;
  for (int64_t r = 0; r < n; ++r) {
    kernels::DeltaNetHeadRows row = rows;
    row.q += r * rows.stride;
    row.k += r * rows.stride;
    row.v += r * rows.stride;
    row.g += r * rows.gb_stride;
    row.beta += r * rows.gb_stride;
    row.out += r * rows.out_stride;
    kernels::delta_net_steps(row, 1, hd, state);
    if (r < plan_.recurrent.n_row_states) {
      std::copy_n(state, hd * hd, matrix_state(plan_.recurrent.row_state(r), layer) + head * hd * hd);
    }
  }
}

Status CpuOps::kv_copy(KvPool pool, std::span<const BlockCopy> copies) {
  for (const BlockCopy& copy : copies) kv_->copy_block(pool, copy);
  return Status::ok();
}

// Row by row: decode the K row, rotate each head's first n_rot values by the angles of `delta`
// (attn_factor 1: a pure rotation), encode it again. Blocks x layers split across the pool.
Status CpuOps::kv_rotate(KvPool pool, std::span<const BlockId> blocks, int64_t delta) {
  const ModelConfig& c = model_->config();
  const KvLayout& kv = kv_->layout();
  const int64_t KV = c.n_embd_kv();
  // The angles of delta for the plan's RoPE, then the window layers' own (the tables are free
  // outside a chunk).
  for (LayerRope which : {LayerRope::Full, LayerRope::SlidingWindow}) {
    if (which == LayerRope::SlidingWindow && !c.has_swa_rope) break;
    kernels::RopeParams pure = plan_.rope_of(which);
    pure.attn_factor = 1.0f;
    const RopeTable table = rope_table(which);
    kernels::rope_angles(delta, table.n_rot, pure, rope_cos_.data() + table.offset, rope_sin_.data() + table.offset);
  }
  const int64_t items = static_cast<int64_t>(blocks.size()) * kv.n_layer;
  const bool neox = c.rope_layout == RopeLayout::Neox;
  pool_.run([&](int ith, int nth) {
    float* x = rotate_rows_.data() + ith * KV;
    for (int64_t item = ith; item < items; item += nth) {
      const int64_t layer = item % kv.n_layer;
      const LayerRope which = c.layer_rope(layer);
      if (which == LayerRope::None || kv.pool_of(layer) != pool) continue;
      const RopeTable table = rope_table(which);
      const float* cs = rope_cos_.data() + table.offset;
      const float* sn = rope_sin_.data() + table.offset;
      const int64_t width = c.layer_kv_width(layer);
      const int64_t row0 = int64_t(blocks[static_cast<size_t>(item / kv.n_layer)]) * kv.block_size;
      for (int64_t r = row0; r < row0 + kv.block_size; ++r) {
        uint8_t* key = kv_->key(layer, r);
        kernels::kv_dequantize(kv.types.k, key, 0, width, x);
        kernels::rope_apply(x, c.n_head_kv, table.head_dim, table.n_rot, cs, sn, neox);
        kernels::kv_quantize_row(kv.types.k, x, key, width);
      }
    }
  });
  return Status::ok();
}

}  // namespace inferscope
