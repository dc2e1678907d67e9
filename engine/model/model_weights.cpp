// One binding table per tensor role; shapes checked against the config before any use.
#include "engine/model/model_weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "kernels/cpu/dequantize.h"
#include "kernels/cpu/int8_rows.h"
#include "kernels/cpu/matmul.h"

namespace inferscope {

namespace {

enum class Need { Required, Optional };

class Binder {
 public:
  Binder(const gguf::File& file, ModelWeights& weights, const uint8_t* tensor_data)
      : file_(file), weights_(weights), tensor_data_(tensor_data) {}
  const gguf::File& file() const { return file_; }

  Status matrix(const std::string& name, int64_t cols, int64_t rows, int64_t n_mats, Need need, WeightMatrix* out) {
    const gguf::TensorInfo* t = file_.find_tensor(name);
    if (t == nullptr) {
      if (need == Need::Optional) return Status::ok();
      return missing(name, shape_text(cols, rows, n_mats));
    }
    if (t->ne[0] != cols || t->ne[1] != rows || t->ne[2] != n_mats || t->ne[3] != 1) {
      return wrong_shape(*t, shape_text(cols, rows, n_mats));
    }
    if (t->type == kernels::GgmlType::I8) return int8_matrix(*t, cols, rows, n_mats, out);
    if (!kernels::matmul_supported(t->type)) {
      return Status::error(file_.error_prefix() + "tensor '" + name + "' has weight type " +
                           kernels::type_name(t->type) + ", which this engine cannot multiply yet");
    }
    *out = WeightMatrix{t, t->type, bytes_of(*t), cols, rows, n_mats, t->row_bytes};
    weights_.total_bytes += t->n_bytes;
    return Status::ok();
  }

  Status vector(const std::string& name, int64_t size, Need need, WeightVector* out) {
    const gguf::TensorInfo* t = file_.find_tensor(name);
    if (t == nullptr) {
      if (need == Need::Optional) return Status::ok();
      return missing(name, "[" + std::to_string(size) + "]");
    }
    if (static_cast<int64_t>(t->n_elements) != size || t->ne[0] != size) {
      return wrong_shape(*t, "[" + std::to_string(size) + "]");
    }
    weights_.total_bytes += t->n_bytes;
    if (t->type == kernels::GgmlType::F32) {
      *out = WeightVector{reinterpret_cast<const float*>(bytes_of(*t)), size};
      return Status::ok();
    }
    auto copy = std::make_unique<float[]>(static_cast<size_t>(size));
    if (!kernels::dequantize_row(t->type, bytes_of(*t), copy.get(), size)) {
      return Status::error(file_.error_prefix() + "tensor '" + name + "' has type " + kernels::type_name(t->type) +
                           ", which cannot be decoded");
    }
    *out = WeightVector{copy.get(), size};
    weights_.converted.push_back(std::move(copy));
    return Status::ok();
  }

  // `m` decoded to F32 into memory the weights own, where it is stored otherwise (a DeltaNet's
  // convolution taps, which the ops read as floats).
  Status as_f32(WeightMatrix& m) {
    if (m.type == kernels::GgmlType::F32) return Status::ok();
    const int64_t rb = m.cols * static_cast<int64_t>(sizeof(float));
    auto bytes = std::make_unique<uint8_t[]>(static_cast<size_t>(m.rows * rb));
    for (int64_t r = 0; r < m.rows; ++r) {
      if (!kernels::dequantize_row(m.type, m.row(r), reinterpret_cast<float*>(bytes.get() + r * rb), m.cols)) {
        return Status::error(file_.error_prefix() + "tensor '" + m.tensor->name + "' has type " +
                             kernels::type_name(m.type) + ", which cannot be decoded");
      }
    }
    m = WeightMatrix{m.tensor, kernels::GgmlType::F32, bytes.get(), m.cols, m.rows, 1, rb};
    weights_.reblocked.push_back(std::move(bytes));
    return Status::ok();
  }

  // A vector of n ones, owned by the weights.
  WeightVector ones(int64_t n) {
    auto copy = std::make_unique<float[]>(static_cast<size_t>(n));
    std::fill_n(copy.get(), n, 1.0f);
    const WeightVector v{copy.get(), n};
    weights_.converted.push_back(std::move(copy));
    return v;
  }

  // A copy of `m` whose rows are reordered by `source_row` (row r of the copy is row
  // source_row(r) of m), in memory the weights own.
  WeightMatrix reordered_rows(const WeightMatrix& m, const std::function<int64_t(int64_t)>& source_row) {
    auto bytes = std::make_unique<uint8_t[]>(static_cast<size_t>(m.rows * m.row_bytes));
    for (int64_t r = 0; r < m.rows; ++r) {
      std::memcpy(bytes.get() + r * m.row_bytes, m.row(source_row(r)), static_cast<size_t>(m.row_bytes));
    }
    WeightMatrix copy = m;
    copy.data = bytes.get();
    weights_.reblocked.push_back(std::move(bytes));
    return copy;
  }

 private:
  // An INT8 per-channel matrix (int8_rows.h): its rows with the scales of "<name>.scale",
  // re-blocked as Q8_0 into memory the weights own.
  Status int8_matrix(const gguf::TensorInfo& t, int64_t cols, int64_t rows, int64_t n_mats, WeightMatrix* out) {
    const gguf::TensorInfo* s = file_.find_tensor(t.name + ".scale");
    if (s == nullptr || s->type != kernels::GgmlType::F32 || static_cast<int64_t>(s->n_elements) != rows * n_mats) {
      return Status::error(file_.error_prefix() + "I8 tensor '" + t.name + "' needs an F32 tensor '" + t.name +
                           ".scale' of " + std::to_string(rows * n_mats) +
                           " per-row scales (Inferscope's INT8 per-channel format)");
    }
    if (cols % 32 != 0) {
      return Status::error(file_.error_prefix() + "I8 tensor '" + t.name + "' has rows of " + std::to_string(cols) +
                           " values, not a multiple of 32");
    }
    const int64_t rb = kernels::row_bytes(kernels::GgmlType::Q8_0, cols);
    auto bytes = std::make_unique<uint8_t[]>(static_cast<size_t>(rows * n_mats * rb));
    const auto* q = reinterpret_cast<const int8_t*>(bytes_of(t));
    const auto* scales = reinterpret_cast<const float*>(bytes_of(*s));
    for (int64_t r = 0; r < rows * n_mats; ++r) kernels::i8_row_as_q8_0(q + r * cols, scales[r], bytes.get() + r * rb, cols);
    *out = WeightMatrix{&t, kernels::GgmlType::Q8_0, bytes.get(), cols, rows, n_mats, rb, q, scales};
    weights_.total_bytes += t.n_bytes + s->n_bytes;
    // The re-blocked rows are what the kernels read: the I8 pages of the mapping go back to the
    // system (LLM.int8() reads the few outlier columns from them again, faulted in on demand).
    if (tensor_data_ == nullptr) file_.release_pages(bytes_of(t), t.n_bytes);
    weights_.reblocked.push_back(std::move(bytes));
    return Status::ok();
  }

  const uint8_t* bytes_of(const gguf::TensorInfo& t) const { return tensor_data_ ? tensor_data_ + t.offset : t.data; }
  static std::string shape_text(int64_t cols, int64_t rows, int64_t n_mats) {
    std::string s = "[" + std::to_string(cols) + ", " + std::to_string(rows);
    if (n_mats != 1) s += ", " + std::to_string(n_mats);
    return s + "]";
  }
  Status missing(const std::string& name, const std::string& shape) const {
    return Status::error(file_.error_prefix() + "required tensor '" + name + "' " + shape + " is missing");
  }
  Status wrong_shape(const gguf::TensorInfo& t, const std::string& expected) const {
    return Status::error(file_.error_prefix() + "tensor '" + t.name + "' has shape " + t.shape_string() +
                         ", expected " + expected);
  }

  const gguf::File& file_;
  ModelWeights& weights_;
  const uint8_t* tensor_data_;
};

// phi3: attn_qkv [n_embd] -> [Q + 2 KV] and ffn_up [n_embd] -> [2 n_ff] holding gate then up.
Status bind_phi3_fused(Binder& b, const ModelConfig& c, const std::string& p, LayerWeights& l) {
  const int64_t E = c.n_embd, Q = c.n_embd_q(), KV = c.n_embd_kv(), F = c.n_ff;
  WeightMatrix qkv, gate_up;
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "attn_qkv.weight", E, Q + 2 * KV, 1, Need::Required, &qkv));
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ffn_up.weight", E, 2 * F, 1, Need::Required, &gate_up));
  l.wq = qkv.row_slice(0, Q);
  l.wk = qkv.row_slice(Q, KV);
  l.wv = qkv.row_slice(Q + KV, KV);
  l.ffn_gate = gate_up.row_slice(0, F);
  l.ffn_up = gate_up.row_slice(F, F);
  return Status::ok();
}

// BERT: attention and FFN matrices with biases, LayerNorm after each residual add.
Status bind_encoder_layer(Binder& b, const ModelConfig& c, const std::string& p, LayerWeights& l) {
  const int64_t E = c.n_embd, F = c.n_ff;
  const Need r = Need::Required;
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "attn_q.weight", E, E, 1, r, &l.wq));
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "attn_k.weight", E, E, 1, r, &l.wk));
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "attn_v.weight", E, E, 1, r, &l.wv));
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "attn_output.weight", E, E, 1, r, &l.wo));
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ffn_up.weight", E, F, 1, r, &l.ffn_up));
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ffn_down.weight", F, E, 1, r, &l.ffn_down));
  const std::pair<const char*, WeightVector*> vectors[] = {
      {"attn_q.bias", &l.bq},
      {"attn_k.bias", &l.bk},
      {"attn_v.bias", &l.bv},
      {"attn_output.bias", &l.bo},
      {"attn_output_norm.weight", &l.attn_output_norm},
      {"attn_output_norm.bias", &l.attn_output_norm_b},
      {"ffn_down.bias", &l.ffn_down_b},
      {"layer_output_norm.weight", &l.layer_output_norm},
      {"layer_output_norm.bias", &l.layer_output_norm_b}};
  for (const auto& [name, v] : vectors) INFERSCOPE_RETURN_IF_ERROR(b.vector(p + name, E, r, v));
  return b.vector(p + "ffn_up.bias", F, r, &l.ffn_up_b);
}

Status bind_expert_layer(Binder& b, const ModelConfig& c, const std::string& p, LayerWeights& l);

// qwen35's full-attention layer: attn_q gives per head head_dim query rows then head_dim gate
// rows, reordered here into every query row then every gate row; per-head q/k norms; the FFN's
// norm is named post_attention_norm.
Status bind_gated_attention(Binder& b, const ModelConfig& c, const std::string& p, LayerWeights& l) {
  const int64_t E = c.n_embd, Q = c.n_embd_q(), KV = c.n_embd_kv(), hd = c.head_dim;
  const Need r = Need::Required;
  WeightMatrix q_gate;
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "attn_q.weight", E, 2 * Q, 1, r, &q_gate));
  const WeightMatrix split = b.reordered_rows(q_gate, [&](int64_t row) {
    const int64_t part = row / Q, head = row % Q / hd;  // part 0: query rows, 1: gate rows
    return (2 * head + part) * hd + row % hd;
  });
  l.wq = split.row_slice(0, Q);
  l.wq_gate = split.row_slice(Q, Q);
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "attn_k.weight", E, KV, 1, r, &l.wk));
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "attn_v.weight", E, KV, 1, r, &l.wv));
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "attn_output.weight", Q, E, 1, r, &l.wo));
  INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "attn_q_norm.weight", hd, r, &l.attn_q_norm));
  return b.vector(p + "attn_k_norm.weight", hd, r, &l.attn_k_norm);
}

// qwen3next's ssm_ba: per key head, its value heads' update rows then their decay rows,
// reordered into every update row, then every decay row.
Status bind_beta_alpha(Binder& b, const ModelConfig& c, const std::string& p, LayerWeights& l) {
  const DeltaNetShape& d = c.delta_net;
  const int64_t H = d.n_v_heads, per_key = H / d.n_k_heads;
  WeightMatrix ba;
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ssm_ba.weight", c.n_embd, 2 * H, 1, Need::Required, &ba));
  const WeightMatrix split = b.reordered_rows(ba, [&](int64_t row) {
    const int64_t head = row % H, part = row / H;  // part 0: beta, 1: alpha
    return head / per_key * 2 * per_key + part * per_key + head % per_key;
  });
  l.ssm_beta = split.row_slice(0, H);
  l.ssm_alpha = split.row_slice(H, H);
  return Status::ok();
}

// qwen35's (and qwen3next's) Gated DeltaNet layer (ModelConfig::delta_net).
Status bind_delta_net(Binder& b, const ModelConfig& c, const std::string& p, LayerWeights& l) {
  const DeltaNetShape& d = c.delta_net;
  const int64_t E = c.n_embd, H = d.n_v_heads;
  const Need r = Need::Required;
  if (b.file().find_tensor(p + "ssm_in.weight") != nullptr && b.file().find_tensor(p + "attn_qkv.weight") == nullptr) {
    return Status::error(b.file().error_prefix() + "tensor '" + p + "ssm_in.weight' is the first Qwen3-Next GGUFs' "
                         "joint q/k/v/z projection, which is not supported: convert the model again with a current "
                         "llama.cpp (attn_qkv and attn_gate)");
  }
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "attn_qkv.weight", E, d.channels(), 1, r, &l.ssm_qkv));
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "attn_gate.weight", E, d.value_dim(), 1, r, &l.ssm_z));
  if (c.arch == Architecture::Qwen3Next) {
    INFERSCOPE_RETURN_IF_ERROR(bind_beta_alpha(b, c, p, l));
  } else {
    INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ssm_alpha.weight", E, H, 1, r, &l.ssm_alpha));
    INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ssm_beta.weight", E, H, 1, r, &l.ssm_beta));
  }
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ssm_conv1d.weight", d.conv_kernel, d.channels(), 1, r, &l.ssm_conv1d));
  INFERSCOPE_RETURN_IF_ERROR(b.as_f32(l.ssm_conv1d));
  INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "ssm_dt.bias", H, r, &l.ssm_dt));
  INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "ssm_a", H, r, &l.ssm_a));
  INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "ssm_norm.weight", d.head_dim, r, &l.ssm_norm));
  return b.matrix(p + "ssm_out.weight", d.value_dim(), E, 1, r, &l.ssm_out);
}

// qwen35: a DeltaNet or a gated attention layer, then a dense SwiGLU FFN (qwen35moe: experts and
// a gated shared expert) after post_attention_norm.
Status bind_hybrid_layer(Binder& b, const ModelConfig& c, int64_t i, const std::string& p, LayerWeights& l) {
  const int64_t E = c.n_embd;
  const Need r = Need::Required;
  INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "attn_norm.weight", E, r, &l.attn_norm));
  INFERSCOPE_RETURN_IF_ERROR(c.is_recurrent(i) ? bind_delta_net(b, c, p, l) : bind_gated_attention(b, c, p, l));
  INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "post_attention_norm.weight", E, r, &l.ffn_norm));
  if (c.is_moe()) return bind_expert_layer(b, c, p, l);
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ffn_gate.weight", E, c.n_ff, 1, r, &l.ffn_gate));
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ffn_up.weight", E, c.n_ff, 1, r, &l.ffn_up));
  return b.matrix(p + "ffn_down.weight", c.n_ff, E, 1, r, &l.ffn_down);
}

// gemma4: a layer's heads are its own size (ModelConfig::layer_head_dim); a shared-KV layer has
// no K or V (a file's unused ones are left unbound); V without attn_v is K's projection
// (Gemma 4's k_eq_v layers); the per-layer input's gate, projection and norm; the output scale.
Status bind_gemma4_layer(Binder& b, const ModelConfig& c, int64_t i, const std::string& p, LayerWeights& l) {
  const int64_t E = c.n_embd, hd = c.layer_head_dim(i), Q = c.layer_q_width(i), KV = c.layer_kv_width(i);
  const int64_t F = c.layer_ff_width(i), P = c.n_embd_per_layer;
  const Need r = Need::Required;
  INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "attn_norm.weight", E, r, &l.attn_norm));
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "attn_q.weight", E, Q, 1, r, &l.wq));
  INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "attn_q_norm.weight", hd, r, &l.attn_q_norm));
  if (c.stores_kv(i)) {
    INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "attn_k.weight", E, KV, 1, r, &l.wk));
    INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "attn_v.weight", E, KV, 1, Need::Optional, &l.wv));
    INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "attn_k_norm.weight", hd, r, &l.attn_k_norm));
    if (c.has_v_norm) l.attn_v_norm = b.ones(hd);
  }
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "attn_output.weight", Q, E, 1, r, &l.wo));
  INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "post_attention_norm.weight", E, r, &l.attn_post_norm));
  INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "ffn_norm.weight", E, r, &l.ffn_norm));
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ffn_gate.weight", E, F, 1, r, &l.ffn_gate));
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ffn_up.weight", E, F, 1, r, &l.ffn_up));
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ffn_down.weight", F, E, 1, r, &l.ffn_down));
  INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "post_ffw_norm.weight", E, r, &l.ffn_post_norm));
  INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "layer_output_scale.weight", 1, Need::Optional, &l.out_scale));
  if (P == 0) return Status::ok();
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "inp_gate.weight", E, P, 1, r, &l.per_layer_gate));
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "proj.weight", P, E, 1, r, &l.per_layer_proj));
  return b.vector(p + "post_norm.weight", E, r, &l.per_layer_post_norm);
}

// gemma4's per-layer input tables (ModelWeights::per_layer_token_embd), looked up a row at a
// time: their type must be decodable.
Status bind_per_layer_inputs(const gguf::File& f, Binder& b, const ModelConfig& c, ModelWeights& w) {
  const int64_t LP = c.n_layer * c.n_embd_per_layer;
  const Need r = Need::Required;
  INFERSCOPE_RETURN_IF_ERROR(b.matrix("per_layer_token_embd.weight", LP, c.n_vocab, 1, r, &w.per_layer_token_embd));
  if (!kernels::type_info(w.per_layer_token_embd.type).decodable) {
    return Status::error(f.error_prefix() + "per_layer_token_embd.weight has a type that cannot be decoded");
  }
  INFERSCOPE_RETURN_IF_ERROR(b.matrix("per_layer_model_proj.weight", c.n_embd, LP, 1, r, &w.per_layer_model_proj));
  return b.vector("per_layer_proj_norm.weight", c.n_embd_per_layer, r, &w.per_layer_proj_norm);
}

Status bind_layer(Binder& b, const ModelConfig& c, int64_t i, LayerWeights& l) {
  const std::string p = "blk." + std::to_string(i) + ".";
  if (c.is_encoder()) return bind_encoder_layer(b, c, p, l);
  if (c.is_hybrid()) return bind_hybrid_layer(b, c, i, p, l);
  if (c.arch == Architecture::Gemma4) return bind_gemma4_layer(b, c, i, p, l);
  const int64_t E = c.n_embd, Q = c.n_embd_q(), KV = c.n_embd_kv();
  const Need bias = c.has_qkv_bias ? Need::Required : Need::Optional;
  const Need post_norm = c.has_post_norms ? Need::Required : Need::Optional;
  if (c.has_pre_norms) INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "attn_norm.weight", E, Need::Required, &l.attn_norm));
  if (c.arch == Architecture::Phi3) {
    INFERSCOPE_RETURN_IF_ERROR(bind_phi3_fused(b, c, p, l));
  } else {
    INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "attn_q.weight", E, Q, 1, Need::Required, &l.wq));
    INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "attn_k.weight", E, KV, 1, Need::Required, &l.wk));
    INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "attn_v.weight", E, KV, 1, Need::Required, &l.wv));
  }
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "attn_output.weight", Q, E, 1, Need::Required, &l.wo));
  INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "attn_q.bias", Q, bias, &l.bq));
  INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "attn_k.bias", KV, bias, &l.bk));
  INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "attn_v.bias", KV, bias, &l.bv));
  const Need qk_norm = c.has_qk_norm ? Need::Required : Need::Optional;
  INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "attn_q_norm.weight", c.qk_norm_whole ? Q : c.head_dim, qk_norm, &l.attn_q_norm));
  INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "attn_k_norm.weight", c.qk_norm_whole ? KV : c.head_dim, qk_norm, &l.attn_k_norm));
  INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "attn_output.bias", E, Need::Optional, &l.bo));
  if (c.arch == Architecture::GptOss) {
    // gpt-oss's norm before the FFN is named post_attention_norm; its heads have sink logits.
    INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "post_attention_norm.weight", E, Need::Required, &l.ffn_norm));
    INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "attn_sinks.weight", c.n_head, Need::Required, &l.attn_sinks));
    return bind_expert_layer(b, c, p, l);
  }
  INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "post_attention_norm.weight", E, post_norm, &l.attn_post_norm));
  if (c.has_pre_norms) INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "ffn_norm.weight", E, Need::Required, &l.ffn_norm));
  INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "post_ffw_norm.weight", E, post_norm, &l.ffn_post_norm));
  if (c.arch == Architecture::Phi3) {
    return b.matrix(p + "ffn_down.weight", c.n_ff, E, 1, Need::Required, &l.ffn_down);
  }
  if (!c.is_moe()) {
    INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ffn_gate.weight", E, c.n_ff, 1, Need::Required, &l.ffn_gate));
    INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ffn_up.weight", E, c.n_ff, 1, Need::Required, &l.ffn_up));
    INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ffn_down.weight", c.n_ff, E, 1, Need::Required, &l.ffn_down));
    return Status::ok();
  }
  return bind_expert_layer(b, c, p, l);
}

// The router and the stacked experts; qwen2moe's shared expert; gpt-oss's biases of both.
Status bind_expert_layer(Binder& b, const ModelConfig& c, const std::string& p, LayerWeights& l) {
  const int64_t E = c.n_embd, X = c.n_expert, F = c.n_ff_expert;
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ffn_gate_inp.weight", E, X, 1, Need::Required, &l.ffn_gate_inp));
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ffn_gate_exps.weight", E, F, X, Need::Required, &l.ffn_gate_exps));
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ffn_up_exps.weight", E, F, X, Need::Required, &l.ffn_up_exps));
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ffn_down_exps.weight", F, E, X, Need::Required, &l.ffn_down_exps));
  if (c.arch == Architecture::GptOss) {
    const Need r = Need::Required;
    INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "ffn_gate_inp.bias", X, r, &l.ffn_gate_inp_b));
    INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ffn_gate_exps.bias", F, X, 1, r, &l.ffn_gate_exps_b));
    INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ffn_up_exps.bias", F, X, 1, r, &l.ffn_up_exps_b));
    INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ffn_down_exps.bias", E, X, 1, r, &l.ffn_down_exps_b));
    for (const WeightMatrix* m : {&l.ffn_gate_exps_b, &l.ffn_up_exps_b, &l.ffn_down_exps_b}) {
      if (m->type != kernels::GgmlType::F32) {
        return Status::error(b.file().error_prefix() + "tensor '" + m->tensor->name + "' must be F32 (expert biases)");
      }
    }
  }
  if (c.n_ff_shared > 0) {  // qwen2moe, qwen35moe, qwen3next
    const int64_t S = c.n_ff_shared;
    INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "ffn_gate_inp_shexp.weight", E, Need::Required, &l.ffn_gate_inp_shexp));
    INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ffn_gate_shexp.weight", E, S, 1, Need::Required, &l.ffn_gate_shexp));
    INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ffn_up_shexp.weight", E, S, 1, Need::Required, &l.ffn_up_shexp));
    INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "ffn_down_shexp.weight", S, E, 1, Need::Required, &l.ffn_down_shexp));
  }
  return Status::ok();
}

// The first MTP block (blk.{n_layer}): a full-attention layer of the model's kind and the
// nextn tensors around it.
Status bind_mtp(Binder& b, const ModelConfig& c, MtpWeights& m) {
  const int64_t E = c.n_embd, il = c.mtp_layer();
  const std::string p = "blk." + std::to_string(il) + ".";
  INFERSCOPE_RETURN_IF_ERROR(bind_hybrid_layer(b, c, il, p, m.block));
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "nextn.eh_proj.weight", 2 * E, E, 1, Need::Required, &m.eh_proj));
  INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "nextn.enorm.weight", E, Need::Required, &m.enorm));
  INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "nextn.hnorm.weight", E, Need::Required, &m.hnorm));
  INFERSCOPE_RETURN_IF_ERROR(b.matrix(p + "nextn.embed_tokens.weight", E, c.n_vocab, 1, Need::Optional, &m.embed));
  if (m.embed.present() && !kernels::type_info(m.embed.type).decodable) {
    return Status::error(b.file().error_prefix() + "tensor '" + p + "nextn.embed_tokens.weight' has a type that cannot be decoded");
  }
  INFERSCOPE_RETURN_IF_ERROR(b.vector(p + "nextn.shared_head_norm.weight", E, Need::Optional, &m.head_norm));
  return b.matrix(p + "nextn.shared_head_head.weight", E, c.n_vocab, 1, Need::Optional, &m.head);
}

// The factors divide RoPE frequencies, so each must be a positive finite number.
Status check_factors(const gguf::File& f, const char* name, const WeightVector& v) {
  for (int64_t i = 0; i < v.size; ++i) {
    if (!(v.data[i] > 0.0f) || !std::isfinite(v.data[i])) {
      return Status::error(f.error_prefix() + "tensor '" + name + "' element " + std::to_string(i) + " is " +
                           std::to_string(v.data[i]) + ", expected a positive RoPE frequency factor");
    }
  }
  return Status::ok();
}

Status bind_rope_factors(const gguf::File& f, Binder& b, const ModelConfig& c, ModelWeights& w) {
  const int64_t half = c.n_rot / 2;
  INFERSCOPE_RETURN_IF_ERROR(b.vector("rope_freqs.weight", half, Need::Optional, &w.rope_freqs));
  INFERSCOPE_RETURN_IF_ERROR(b.vector("rope_factors_long.weight", half, Need::Optional, &w.rope_factors_long));
  INFERSCOPE_RETURN_IF_ERROR(b.vector("rope_factors_short.weight", half, Need::Optional, &w.rope_factors_short));
  if (w.rope_factors_long.present() != w.rope_factors_short.present()) {
    return Status::error(f.error_prefix() + "LongRoPE needs both rope_factors_long.weight and "
                         "rope_factors_short.weight, the file has only one");
  }
  INFERSCOPE_RETURN_IF_ERROR(check_factors(f, "rope_freqs.weight", w.rope_freqs));
  INFERSCOPE_RETURN_IF_ERROR(check_factors(f, "rope_factors_long.weight", w.rope_factors_long));
  return check_factors(f, "rope_factors_short.weight", w.rope_factors_short);
}

// The decoder's head: output_norm and output (token_embd's rows when the file has none).
Status bind_output(Binder& b, const ModelConfig& c, ModelWeights& w) {
  INFERSCOPE_RETURN_IF_ERROR(b.vector("output_norm.weight", c.n_embd, Need::Required, &w.output_norm));
  const Need output_need = c.arch == Architecture::Qwen2Moe ? Need::Required : Need::Optional;
  INFERSCOPE_RETURN_IF_ERROR(b.matrix("output.weight", c.n_embd, c.n_vocab, 1, output_need, &w.output));
  if (!w.output.present()) {
    w.output = w.token_embd;
    w.tied_output = true;
  }
  return Status::ok();
}

// BERT's position and token-type tables and the LayerNorm of the summed embeddings; the rows
// are looked up one at a time, so their type must be decodable.
Status bind_encoder_embeddings(const gguf::File& f, Binder& b, const ModelConfig& c, ModelWeights& w) {
  const Need r = Need::Required;
  INFERSCOPE_RETURN_IF_ERROR(b.matrix("position_embd.weight", c.n_embd, c.n_ctx_train, 1, r, &w.position_embd));
  INFERSCOPE_RETURN_IF_ERROR(b.matrix("token_types.weight", c.n_embd, c.n_token_types, 1, r, &w.token_types));
  for (const WeightMatrix* m : {&w.position_embd, &w.token_types}) {
    if (!kernels::type_info(m->type).decodable) {
      return Status::error(f.error_prefix() + "tensor '" + m->tensor->name + "' has a type that cannot be decoded");
    }
  }
  INFERSCOPE_RETURN_IF_ERROR(b.vector("token_embd_norm.weight", c.n_embd, r, &w.token_embd_norm));
  return b.vector("token_embd_norm.bias", c.n_embd, r, &w.token_embd_norm_b);
}

}  // namespace

Result<std::unique_ptr<ModelWeights>> ModelWeights::bind(const gguf::File& file, const ModelConfig& c,
                                                         const uint8_t* tensor_data) {
  auto w = std::make_unique<ModelWeights>();
  if (const gguf::Value* t = file.find("inferscope.weights.llm_int8_threshold")) {
    if (!(t->real > 0.0) || !std::isfinite(t->real)) {
      return Status::error(file.error_prefix() + "inferscope.weights.llm_int8_threshold must be a positive number");
    }
    w->llm_int8_threshold = static_cast<float>(t->real);
  }
  Binder b(file, *w, tensor_data);
  INFERSCOPE_RETURN_IF_ERROR(b.matrix("token_embd.weight", c.n_embd, c.n_vocab, 1, Need::Required, &w->token_embd));
  if (!kernels::type_info(w->token_embd.type).decodable) {
    return Status::error(file.error_prefix() + "token_embd.weight type cannot be decoded");
  }
  if (c.is_encoder()) {
    INFERSCOPE_RETURN_IF_ERROR(bind_encoder_embeddings(file, b, c, *w));
  } else {
    INFERSCOPE_RETURN_IF_ERROR(bind_output(b, c, *w));
    INFERSCOPE_RETURN_IF_ERROR(bind_rope_factors(file, b, c, *w));
    if (c.n_embd_per_layer > 0) INFERSCOPE_RETURN_IF_ERROR(bind_per_layer_inputs(file, b, c, *w));
  }
  w->layers.resize(static_cast<size_t>(c.n_layer));
  for (int64_t i = 0; i < c.n_layer; ++i) {
    INFERSCOPE_RETURN_IF_ERROR(bind_layer(b, c, i, w->layers[static_cast<size_t>(i)]));
  }
  if (c.has_mtp()) INFERSCOPE_RETURN_IF_ERROR(bind_mtp(b, c, w->mtp));
  return w;
}

void ModelWeights::for_each_matrix(const std::function<void(const WeightMatrix&)>& f) const {
  auto visit = [&](const WeightMatrix& m) {
    if (m.present()) f(m);
  };
  for (const WeightMatrix* m : {&token_embd, &position_embd, &token_types, &per_layer_token_embd, &per_layer_model_proj}) {
    visit(*m);
  }
  if (!tied_output) visit(output);
  std::vector<const LayerWeights*> blocks;
  for (const LayerWeights& l : layers) blocks.push_back(&l);
  if (mtp.present()) blocks.push_back(&mtp.block);
  for (const LayerWeights* layer : blocks) {
    const LayerWeights& l = *layer;
    for (const WeightMatrix* m : {&l.wq, &l.wq_gate, &l.wk, &l.wv, &l.wo, &l.ssm_qkv, &l.ssm_z, &l.ssm_alpha,
                                  &l.ssm_beta, &l.ssm_conv1d, &l.ssm_out, &l.ffn_gate, &l.ffn_up, &l.ffn_down, &l.ffn_gate_inp,
                                  &l.ffn_gate_exps, &l.ffn_up_exps, &l.ffn_down_exps, &l.ffn_gate_exps_b,
                                  &l.ffn_up_exps_b, &l.ffn_down_exps_b, &l.ffn_gate_shexp, &l.ffn_up_shexp,
                                  &l.ffn_down_shexp, &l.per_layer_gate, &l.per_layer_proj}) {
      visit(*m);
    }
  }
  for (const WeightMatrix* m : {&mtp.eh_proj, &mtp.embed, &mtp.head}) visit(*m);
}

void ModelWeights::for_each_vector(const std::function<void(const WeightVector&)>& f) const {
  auto visit = [&](const WeightVector& v) {
    if (v.present()) f(v);
  };
  for (const WeightVector* v : {&output_norm, &rope_freqs, &rope_factors_long, &rope_factors_short, &token_embd_norm,
                                &token_embd_norm_b, &per_layer_proj_norm}) {
    visit(*v);
  }
  std::vector<const LayerWeights*> blocks;
  for (const LayerWeights& l : layers) blocks.push_back(&l);
  if (mtp.present()) blocks.push_back(&mtp.block);
  for (const LayerWeights* layer : blocks) {
    const LayerWeights& l = *layer;
    for (const WeightVector* v : {&l.attn_norm, &l.bq, &l.bk, &l.bv, &l.attn_q_norm, &l.attn_k_norm, &l.attn_sinks,
                                  &l.ffn_gate_inp_b, &l.attn_post_norm, &l.ffn_norm, &l.ffn_post_norm,
                                  &l.ffn_gate_inp_shexp, &l.bo, &l.attn_output_norm, &l.attn_output_norm_b, &l.ffn_up_b,
                                  &l.ffn_down_b, &l.layer_output_norm, &l.layer_output_norm_b, &l.ssm_dt, &l.ssm_a,
                                  &l.ssm_norm, &l.attn_v_norm, &l.per_layer_post_norm, &l.out_scale}) {
      visit(*v);
    }
  }
  for (const WeightVector* v : {&mtp.enorm, &mtp.hnorm, &mtp.head_norm}) visit(*v);
}

}  // namespace inferscope
