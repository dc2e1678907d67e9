// Importance matrices, as llama.cpp's llama-imatrix makes them: for every weight matrix of the
// blocks, the sum over a calibration text of each input column's squared activation
// (in_sum2[j] = sum over rows x_j^2) and the number of rows summed. A quantizer that takes one
// weighs each column's rounding error by the mean, in_sum2[j] / count.
//
// The text is read as llama-imatrix reads it: tokenized once (with BOS), cut into whole chunks
// of chunk_size tokens (the rest is dropped), each chunk's first token replaced by BOS and the
// chunk evaluated from an empty cache in one batch, every row counted. Matrices that share an
// input (q, k, v; gate, up) get the same sums, each under its own name, as the reference's
// separate products give them. output.weight is not included (the reference's default).
// Expert matrices of MoE models are not observed by the CPU backend's matmul hook
// (CpuOps::observe_matmuls): they get no entry, and a quantizer rounds them unweighted.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/model/model.h"

namespace inferscope {

struct ImatrixEntry {
  // [n_mat][cols]: one row per matrix of the tensor (an expert each for a MoE tensor; 1 else).
  std::vector<float> in_sum2;
  std::vector<float> counts;  // [n_mat] rows summed into each matrix's part

  int64_t n_mat() const { return static_cast<int64_t>(counts.size()); }
  int64_t values_per_mat() const { return counts.empty() ? 0 : static_cast<int64_t>(in_sum2.size()) / n_mat(); }
  // in_sum2 / count of matrix `mat`'s columns; 1 for every column of a matrix no row reached.
  std::vector<float> mean(int64_t mat = 0) const;
};

struct ImportanceMatrix {
  std::map<std::string, ImatrixEntry> entries;  // by weight tensor name ("blk.0.attn_q.weight")
  int64_t chunk_count = 0;
  int64_t chunk_size = 0;
  std::vector<std::string> datasets;  // the texts it was computed from

  const ImatrixEntry* find(const std::string& tensor) const;
};

struct ImatrixOptions {
  int64_t chunk_size = 512;  // tokens per chunk (at most the model's training context)
  int64_t max_chunks = -1;   // -1: every whole chunk of the text
  int n_threads = 1;
  std::string dataset;  // recorded in the result (the text's file name)
  std::function<void(int64_t done, int64_t total)> progress;  // after each chunk
};

// Fails when the text has no whole chunk or the model does not load on the CPU backend.
Result<ImportanceMatrix> compute_imatrix(std::shared_ptr<const Model> model, const std::string& text,
                                         const ImatrixOptions& options);

}  // namespace inferscope
