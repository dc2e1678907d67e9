// Unstructured and semi-structured pruning as a conversion hook (quantize_model.h): the linear
// layers of every block (attention q, k, v, output; ffn gate, up, down; not the embeddings, the
// output head or the MoE router) lose their least important weights, set to 0, before the
// tensor is encoded in the target type.
//   magnitude  per output row, the `sparsity` fraction with the smallest |w|
//   wanda      per output row, the smallest |w_ij| x ||x_j||_2 (Sun et al., 2023): the input
//              feature norms from calibration activations
//   2:4        in every 4 consecutive weights of a row, the 2 with the smallest Wanda score
//              (|w| where a matrix has no calibration)
// The zeros are stored densely in the target type: the file is no smaller and decoding no
// faster (a 2:4 format that stores only the kept values is a separate step, docs/WEIGHT-LAB.md).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/model/quantize_model.h"
#include "engine/weightlab/calibration.h"

namespace inferscope {

enum class PruneRule { Magnitude, Wanda, TwoFour };

// Whether `name` is one of the pruned linear layers.
bool is_prunable_tensor(const std::string& name, int n_dims);

// In place over one row of n weights: zero the lowest scores (score[i] = |w[i]| x norms[i], or
// |w[i]| without norms). Magnitude / Wanda: the round(sparsity x n) lowest (ties: lower index
// first); 2:4: the 2 lowest of each 4 (n % 4 == 0).
void prune_row(PruneRule rule, float* w, int64_t n, const float* norms, double sparsity);

class PruneRewriter : public TensorRewriter {
 public:
  // calibration: needed by wanda (and used by 2:4 when given); may be null for magnitude.
  PruneRewriter(PruneRule rule, double sparsity, std::shared_ptr<const Calibration> calibration);

  bool changes_values(const std::string& name) const override;
  void transform_rows(const std::string& name, int64_t first_row, float* rows, int64_t n, int64_t cols) const override;
  bool encode_rows(const std::string&, kernels::GgmlType, float*, int64_t, int64_t, uint8_t*, ThreadPool&) const override {
    return false;
  }
  void add_metadata(gguf::Writer& writer) const override;

 private:
  const std::vector<float>* norms_of(const std::string& name) const;

  PruneRule rule_;
  double sparsity_;
  std::shared_ptr<const Calibration> calibration_;
  mutable std::map<const CalibrationInput*, std::vector<float>> norms_;  // per input: ||x_j||_2
};

}  // namespace inferscope
