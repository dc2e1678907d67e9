#include "engine/weightlab/head_pruning.h"

#include <algorithm>
#include <numeric>

#include "engine/weightlab/awq.h"
#include "kernels/cpu/dequantize.h"
#include "kernels/cpu/quantize.h"

namespace inferscope {
namespace {

using kernels::GgmlType;

struct Shape {
  std::string arch;
  int64_t n_layer = 0, n_head = 0, n_head_kv = 0, head_dim = 0;
  int64_t group() const { return n_head / n_head_kv; }
};

std::vector<float> decode_tensor(const gguf::TensorInfo& t) {
  const int64_t cols = t.ne[0], rows = static_cast<int64_t>(t.n_elements) / cols;
  std::vector<float> out(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) kernels::dequantize_row(t.type, t.data + r * t.row_bytes, out.data() + r * cols, cols);
  return out;
}

// sum_t ||Wo[:, h] a_t[h]||^2 per KV group of one layer.
std::vector<double> group_importance(const gguf::TensorInfo& wo, const CalibrationInput& attn, const Shape& s) {
  const std::vector<float> w = decode_tensor(wo);
  const int64_t rows = wo.ne[1], cols = wo.ne[0];
  std::vector<double> importance(static_cast<size_t>(s.n_head_kv), 0.0);
  std::vector<double> contribution(static_cast<size_t>(rows));
  for (int64_t t : evenly_spaced(attn.n(), 128)) {
    const float* a = attn.row(t);
    for (int64_t h = 0; h < s.n_head; ++h) {
      std::fill(contribution.begin(), contribution.end(), 0.0);
      for (int64_t r = 0; r < rows; ++r) {
        const float* wr = w.data() + r * cols + h * s.head_dim;
        double dot = 0;
        for (int64_t d = 0; d < s.head_dim; ++d) dot += static_cast<double>(wr[d]) * a[h * s.head_dim + d];
        contribution[static_cast<size_t>(r)] = dot;
      }
      double norm2 = 0;
      for (double c : contribution) norm2 += c * c;
      importance[static_cast<size_t>(h / s.group())] += norm2;
    }
  }
  return importance;
}

// The rows of `t` in the kept units of `unit_rows` rows each, copied as stored.
gguf::TensorSource kept_rows(const gguf::TensorInfo& t, std::vector<int64_t> units, int64_t unit_rows) {
  return [&t, units, unit_rows](gguf::ByteSink& out) -> Status {
    for (int64_t u : units) {
      INFERSCOPE_RETURN_IF_ERROR(out.write(t.data + u * unit_rows * t.row_bytes, static_cast<size_t>(unit_rows * t.row_bytes)));
    }
    return Status::ok();
  };
}

// attn_output with only the kept heads' columns, re-encoded in `to`.
gguf::TensorSource kept_columns(const gguf::TensorInfo& t, std::vector<int64_t> heads, int64_t head_dim, GgmlType to) {
  return [&t, heads, head_dim, to](gguf::ByteSink& out) -> Status {
    const int64_t cols = t.ne[0], kept = static_cast<int64_t>(heads.size()) * head_dim;
    std::vector<float> row(static_cast<size_t>(cols)), slim(static_cast<size_t>(kept));
    std::vector<uint8_t> bytes(static_cast<size_t>(kernels::row_bytes(to, kept)));
    for (int64_t r = 0; r < t.ne[1]; ++r) {
      kernels::dequantize_row(t.type, t.data + r * t.row_bytes, row.data(), cols);
      for (size_t i = 0; i < heads.size(); ++i) {
        std::copy_n(row.begin() + heads[i] * head_dim, head_dim, slim.begin() + static_cast<int64_t>(i) * head_dim);
      }
      kernels::quantize_row(to, slim.data(), bytes.data(), kept);
      INFERSCOPE_RETURN_IF_ERROR(out.write(bytes.data(), bytes.size()));
    }
    return Status::ok();
  };
}

Result<Shape> shape_of(const gguf::File& f) {
  Shape s;
  auto arch = f.get_string("general.architecture");
  if (!arch) return arch.status();
  s.arch = *arch;
  const std::string a = s.arch + ".";
  auto get = [&](const std::string& key, int64_t fallback) { return f.get_int_or(a + key, fallback); };
  auto layers = get("block_count", 0);
  auto heads = get("attention.head_count", 0);
  if (!layers || !heads) return Result<Shape>::error("cannot read the head counts");
  s.n_layer = *layers;
  s.n_head = *heads;
  auto kv = get("attention.head_count_kv", s.n_head);
  auto embd = get("embedding_length", 0);
  if (!kv || !embd || s.n_head <= 0 || *kv <= 0 || s.n_head % *kv != 0) {
    return Result<Shape>::error("cannot read the head counts");
  }
  s.n_head_kv = *kv;
  auto hd = get("attention.key_length", *embd / s.n_head);
  if (!hd) return hd.status();
  s.head_dim = *hd;
  return s;
}

}  // namespace

Result<HeadPruning> prune_heads(std::shared_ptr<const gguf::File> file, const Calibration& calibration,
                                int query_heads) {
  auto shape = shape_of(*file);
  if (!shape) return shape.status();
  const Shape s = *shape;
  if (query_heads <= 0 || query_heads % s.group() != 0 || query_heads >= s.n_head) {
    return Result<HeadPruning>::error("--heads " + std::to_string(query_heads) + ": remove a multiple of " +
                                      std::to_string(s.group()) + " query heads (whole KV groups), fewer than " +
                                      std::to_string(s.n_head));
  }
  const int64_t groups_removed = query_heads / s.group();
  HeadPruning out;
  out.source = file;
  out.heads_before = static_cast<int>(s.n_head);
  out.heads_after = static_cast<int>(s.n_head - query_heads);
  out.kv_heads_after = static_cast<int>(s.n_head_kv - groups_removed);
  // Per layer: the kept KV groups and query heads.
  std::vector<std::vector<int64_t>> kept_groups(static_cast<size_t>(s.n_layer)), kept_heads(kept_groups.size());
  for (int64_t l = 0; l < s.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    if (file->find_tensor(p + "attn_qkv.weight")) return Result<HeadPruning>::error("fused attn_qkv is not supported");
    const gguf::TensorInfo* wo = file->find_tensor(p + "attn_output.weight");
    const CalibrationInput* attn = calibration.input_of(p + "attn_output.weight");
    if (!wo || !attn || attn->cols != wo->ne[0] || wo->ne[0] != s.n_head * s.head_dim) {
      return Result<HeadPruning>::error("layer " + std::to_string(l) + ": no attention output to rank heads by");
    }
    std::vector<double> importance = group_importance(*wo, *attn, s);
    std::vector<int64_t> order(static_cast<size_t>(s.n_head_kv));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return importance[static_cast<size_t>(a)] < importance[static_cast<size_t>(b)];
    });
    std::vector<int> removed(order.begin(), order.begin() + groups_removed);
    std::sort(removed.begin(), removed.end());
    for (int64_t g = 0; g < s.n_head_kv; ++g) {
      if (std::binary_search(removed.begin(), removed.end(), static_cast<int>(g))) continue;
      kept_groups[static_cast<size_t>(l)].push_back(g);
      for (int64_t h = g * s.group(); h < (g + 1) * s.group(); ++h) kept_heads[static_cast<size_t>(l)].push_back(h);
    }
    out.importance.push_back(std::move(importance));
    out.removed.push_back(std::move(removed));
  }

  gguf::Writer& w = out.writer;
  w.copy_metadata(*file, "");
  const std::string a = s.arch + ".attention.";
  w.add_u32(a + "head_count", static_cast<uint32_t>(out.heads_after));
  w.add_u32(a + "head_count_kv", static_cast<uint32_t>(out.kv_heads_after));
  w.add_u32(a + "key_length", static_cast<uint32_t>(s.head_dim));
  w.add_u32(a + "value_length", static_cast<uint32_t>(s.head_dim));
  w.add_u32("inferscope.weightlab.heads_removed", static_cast<uint32_t>(query_heads));
  for (const gguf::TensorInfo& t : file->tensors()) {
    std::vector<int64_t> ne(t.ne.begin(), t.ne.begin() + t.n_dims);
    int64_t layer = -1;
    std::string role;
    if (t.name.rfind("blk.", 0) == 0) {
      const size_t dot = t.name.find('.', 4);
      layer = std::stoll(t.name.substr(4, dot - 4));
      role = t.name.substr(dot + 1);
    }
    if (layer < 0 || layer >= s.n_layer) {
      w.add_tensor_copy(file, t);
      continue;
    }
    const auto& heads = kept_heads[static_cast<size_t>(layer)];
    const auto& groups = kept_groups[static_cast<size_t>(layer)];
    const bool is_q = role == "attn_q.weight" || role == "attn_q.bias";
    const bool is_kv = role == "attn_k.weight" || role == "attn_v.weight" || role == "attn_k.bias" ||
                       role == "attn_v.bias";
    if (is_q || is_kv) {
      // A bias is one row of n elements: treat its head slices as rows of head_dim elements.
      const bool bias = t.n_dims == 1;
      const std::vector<int64_t>& units = is_q ? heads : groups;
      ne.back() = static_cast<int64_t>(units.size()) * s.head_dim;
      if (bias) {
        w.add_tensor_source(t.name, ne, t.type, [&t, units, hd = s.head_dim](gguf::ByteSink& sink) -> Status {
          const size_t elem = kernels::type_info(t.type).type_size;
          for (int64_t u : units) INFERSCOPE_RETURN_IF_ERROR(sink.write(t.data + u * hd * elem, hd * elem));
          return Status::ok();
        });
      } else {
        w.add_tensor_source(t.name, ne, t.type, kept_rows(t, units, s.head_dim));
      }
    } else if (role == "attn_output.weight") {
      const int64_t kept = static_cast<int64_t>(heads.size()) * s.head_dim;
      const GgmlType to = kept % kernels::type_info(t.type).block_size == 0 ? t.type : GgmlType::F32;
      ne[0] = kept;
      w.add_tensor_source(t.name, ne, to, kept_columns(t, heads, s.head_dim, to));
    } else {
      w.add_tensor_copy(file, t);
    }
  }
  return out;
}

}  // namespace inferscope
