#include "engine/weightlab/awq_rewriter.h"

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "kernels/cpu/dequantize.h"

namespace inferscope {

// The search over one file: samples rows of its matrices with the folds decided so far.
struct AwqRewriter::Search {
  const gguf::File& file;
  const Calibration& calibration;
  const QuantMix& mix;
  const AwqOptions& options;
  ThreadPool& pool;
  QuantModelInfo info;
  std::string architecture;  // general.architecture
  AwqRewriter& out;

  const gguf::TensorInfo* tensor(const std::string& name) const { return file.find_tensor(name); }

  // Sampled rows of `name` in F32, its earlier row divisors applied.
  AwqMatrix sample(const gguf::TensorInfo& t) const {
    const int64_t cols = t.ne[0];
    const int64_t rows = static_cast<int64_t>(t.n_elements) / cols;
    AwqMatrix m;
    m.type = choose_tensor_type(mix, info, t.name, t.n_dims, cols, t.type);
    const auto div = out.divide_rows_.find(t.name);
    for (int64_t r : evenly_spaced(rows, options.max_rows)) {
      std::vector<float> row(static_cast<size_t>(cols));
      kernels::dequantize_row(t.type, t.data + r * t.row_bytes, row.data(), cols);
      if (div != out.divide_rows_.end()) {
        for (float& v : row) v /= div->second[static_cast<size_t>(r)];
      }
      m.rows.insert(m.rows.end(), row.begin(), row.end());
    }
    return m;
  }

  // Searches the group of `matrices` (sharing one input) and records the folds: the matrices'
  // columns, and `fold` (a norm vector, or a matrix whose rows produce the input). Experts'
  // matrices (3-D) are not observed by the calibration: their group gives the input they share
  // (`shared_input`) and the unquantized tensors that read it too (`followers`: their columns
  // are scaled as well).
  void group(const std::string& label, const std::vector<std::string>& matrices, const std::string& fold,
             bool fold_is_rows, const CalibrationInput* shared_input = nullptr,
             const std::vector<std::string>& followers = {}) {
    std::vector<AwqMatrix> sampled;
    const CalibrationInput* input = shared_input;
    for (const std::string& name : matrices) {
      const gguf::TensorInfo* t = tensor(name);
      if (!t || t->n_dims < 2 || (!shared_input && t->n_dims != 2)) return;
      const CalibrationInput* in = shared_input ? shared_input : calibration.input_of(name);
      if (!in || in->cols != t->ne[0] || (input && in != input)) return;
      input = in;
      sampled.push_back(sample(*t));
    }
    for (const std::string& name : followers) {
      const gguf::TensorInfo* t = tensor(name);
      if (!t || !input || t->ne[0] != input->cols) return;
    }
    const gguf::TensorInfo* target = tensor(fold);
    if (!input || input->n() == 0 || !target) return;
    const int64_t fold_len = fold_is_rows ? static_cast<int64_t>(target->n_elements) / target->ne[0] : target->ne[0];
    if (fold_len != input->cols || (!fold_is_rows && target->n_dims != 1)) return;
    for (const AwqMatrix& m : sampled) {
      if (input->cols % kernels::type_info(m.type).block_size != 0) return;
    }
    AwqChoice c = awq_search(*input, sampled, options, pool);
    out.choices_.push_back({label, c.alpha, c.error, c.error_plain});
    if (c.alpha == 0.0) return;
    for (const std::string& name : matrices) out.multiply_columns_[name] = c.scales;
    for (const std::string& name : followers) out.multiply_columns_[name] = c.scales;
    (fold_is_rows ? out.divide_rows_ : out.divide_columns_)[fold] = c.scales;
  }

  // A MoE layer's experts' gate and up, and its shared expert's, read the FFN norm's output as
  // the router does: the router's calibration input stands for theirs (each expert sees a subset
  // of those rows), and the router's columns and the shared expert's gate vector take the scales
  // too. Their down matrices' inputs are never observed: rounded plainly.
  void experts(const std::string& p) {
    if (!tensor(p + "ffn_gate_exps.weight")) return;
    const std::string norm = ffn_norm(p);
    if (norm.empty()) return;
    std::vector<std::string> searched = {p + "ffn_gate_exps.weight", p + "ffn_up_exps.weight"};
    std::vector<std::string> followers = {p + "ffn_gate_inp.weight"};
    if (tensor(p + "ffn_gate_shexp.weight")) {
      searched.insert(searched.end(), {p + "ffn_gate_shexp.weight", p + "ffn_up_shexp.weight"});
    }
    if (tensor(p + "ffn_gate_inp_shexp.weight")) followers.push_back(p + "ffn_gate_inp_shexp.weight");
    group(p + "experts gate,up", searched, norm, false, calibration.input_of(p + "ffn_gate_inp.weight"), followers);
  }

  // The norm before the FFN: ffn_norm, named post_attention_norm by gpt-oss and the Qwen3.5
  // family (whose post_attention_norm is no post-norm); "" for none.
  std::string ffn_norm(const std::string& p) const {
    if (tensor(p + "ffn_norm.weight")) return p + "ffn_norm.weight";
    const bool named_post = architecture == "gpt-oss" || architecture == "qwen35" || architecture == "qwen35moe" ||
                            architecture == "qwen3next";
    return named_post ? p + "post_attention_norm.weight" : "";
  }

  void layer(int64_t i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    // A Gated DeltaNet layer's four projections share attn_norm's output.
    group(p + "deltanet in", {p + "attn_qkv.weight", p + "attn_gate.weight", p + "ssm_alpha.weight", p + "ssm_beta.weight"},
          p + "attn_norm.weight", false);
    if (info.n_head == info.n_head_kv) {
      group(p + "wo", {p + "attn_output.weight"}, p + "attn_v.weight", true);
    }
    group(p + "q,k,v", {p + "attn_q.weight", p + "attn_k.weight", p + "attn_v.weight"}, p + "attn_norm.weight", false);
    group(p + "down", {p + "ffn_down.weight"}, p + "ffn_up.weight", true);
    if (!ffn_norm(p).empty()) group(p + "gate,up", {p + "ffn_gate.weight", p + "ffn_up.weight"}, ffn_norm(p), false);
    experts(p);
  }
};

Result<std::shared_ptr<AwqRewriter>> AwqRewriter::search(const gguf::File& file, const Calibration& calibration,
                                                         const QuantMix& mix, const AwqOptions& options,
                                                         ThreadPool& pool) {
  auto rewriter = std::shared_ptr<AwqRewriter>(new AwqRewriter());
  auto architecture = file.get_string_or("general.architecture", "");
  Search s{file,           calibration, mix, options, pool, QuantModelInfo::from_gguf(file),
           architecture.is_ok() ? architecture.value() : "", *rewriter};
  for (int64_t i = 0; i < s.info.n_layer; ++i) s.layer(i);
  if (s.info.has_output) s.group("output", {"output.weight"}, "output_norm.weight", false);
  return rewriter;
}

bool AwqRewriter::changes_values(const std::string& name) const {
  return multiply_columns_.count(name) || divide_columns_.count(name) || divide_rows_.count(name);
}

void AwqRewriter::transform_rows(const std::string& name, int64_t first_row, float* rows, int64_t n,
                                 int64_t cols) const {
  if (const auto it = multiply_columns_.find(name); it != multiply_columns_.end()) {
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t c = 0; c < cols; ++c) rows[r * cols + c] *= it->second[static_cast<size_t>(c)];
    }
  }
  if (const auto it = divide_columns_.find(name); it != divide_columns_.end()) {
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t c = 0; c < cols; ++c) rows[r * cols + c] /= it->second[static_cast<size_t>(c)];
    }
  }
  if (const auto it = divide_rows_.find(name); it != divide_rows_.end()) {
    for (int64_t r = 0; r < n; ++r) {
      const float d = it->second[static_cast<size_t>(first_row + r)];
      for (int64_t c = 0; c < cols; ++c) rows[r * cols + c] /= d;
    }
  }
}

void AwqRewriter::add_metadata(gguf::Writer& writer) const { writer.add_string("inferscope.weightlab.method", "awq"); }

}  // namespace inferscope
