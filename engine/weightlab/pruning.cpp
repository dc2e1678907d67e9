#include "engine/weightlab/pruning.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/gguf/gguf_writer.h"

namespace inferscope {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

float score(const float* w, const float* norms, int64_t i) { return std::fabs(w[i]) * (norms ? norms[i] : 1.0f); }

}  // namespace

bool is_prunable_tensor(const std::string& name, int n_dims) {
  if (n_dims != 2 || name.rfind("blk.", 0) != 0) return false;
  for (const char* suffix : {".attn_q.weight", ".attn_k.weight", ".attn_v.weight", ".attn_qkv.weight",
                             ".attn_output.weight", ".ffn_gate.weight", ".ffn_up.weight", ".ffn_down.weight"}) {
    if (ends_with(name, suffix)) return true;
  }
  return false;
}

void prune_row(PruneRule rule, float* w, int64_t n, const float* norms, double sparsity) {
  if (rule == PruneRule::TwoFour) {
    for (int64_t g = 0; g + 4 <= n; g += 4) {
      int64_t idx[4] = {g, g + 1, g + 2, g + 3};
      std::stable_sort(idx, idx + 4, [&](int64_t a, int64_t b) { return score(w, norms, a) < score(w, norms, b); });
      w[idx[0]] = 0.0f;
      w[idx[1]] = 0.0f;
    }
    return;
  }
  const auto drop = static_cast<int64_t>(std::llround(std::clamp(sparsity, 0.0, 1.0) * static_cast<double>(n)));
  std::vector<int64_t> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return score(w, norms, a) < score(w, norms, b); });
  for (int64_t i = 0; i < drop; ++i) w[idx[static_cast<size_t>(i)]] = 0.0f;
}

PruneRewriter::PruneRewriter(PruneRule rule, double sparsity, std::shared_ptr<const Calibration> calibration)
    : rule_(rule), sparsity_(sparsity), calibration_(std::move(calibration)) {}

bool PruneRewriter::changes_values(const std::string& name) const {
  // 2-D is implied by the names; the norms and the embeddings are never pruned.
  return is_prunable_tensor(name, 2);
}

const std::vector<float>* PruneRewriter::norms_of(const std::string& name) const {
  if (rule_ == PruneRule::Magnitude || !calibration_) return nullptr;
  const CalibrationInput* input = calibration_->input_of(name);
  if (!input || input->n() == 0) return nullptr;
  auto [it, added] = norms_.try_emplace(input);
  if (added) {
    std::vector<double> sums(static_cast<size_t>(input->cols), 0.0);
    for (int64_t t = 0; t < input->n(); ++t) {
      const float* x = input->row(t);
      for (int64_t c = 0; c < input->cols; ++c) sums[static_cast<size_t>(c)] += static_cast<double>(x[c]) * x[c];
    }
    it->second.resize(sums.size());
    for (size_t c = 0; c < sums.size(); ++c) it->second[c] = static_cast<float>(std::sqrt(sums[c]));
  }
  return &it->second;
}

void PruneRewriter::transform_rows(const std::string& name, int64_t, float* rows, int64_t n, int64_t cols) const {
  if (!is_prunable_tensor(name, 2)) return;
  const std::vector<float>* norms = norms_of(name);
  const float* norm_data = norms && static_cast<int64_t>(norms->size()) == cols ? norms->data() : nullptr;
  for (int64_t r = 0; r < n; ++r) prune_row(rule_, rows + r * cols, cols, norm_data, sparsity_);
}

void PruneRewriter::add_metadata(gguf::Writer& writer) const {
  static constexpr const char* kNames[] = {"magnitude", "wanda", "2:4"};
  writer.add_string("inferscope.weightlab.method", kNames[static_cast<int>(rule_)]);
  if (rule_ != PruneRule::TwoFour) writer.add_f32("inferscope.weightlab.sparsity", static_cast<float>(sparsity_));
}

}  // namespace inferscope
