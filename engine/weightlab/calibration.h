// Calibration activations for the weight lab: the input rows every weight matrix multiplies
// while the model (as stored, on the CPU backend) reads a calibration text. GPTQ builds its
// Hessian H = 2/n X^T X from them, AWQ its per-channel magnitudes and output errors, Wanda its
// input norms.
//
// The text is tokenized with the model's own tokenizer and read in sequences of seq_len tokens,
// each from an empty KV cache. Matrices that share an input (q, k, v; gate, up) share one
// CalibrationInput. Memory: max_tokens x the widths of the distinct inputs (a 1.1B model,
// 1024 tokens: about 1 GB). Expert matrices of MoE models see no calibration (they are
// multiplied by matmul_experts, not matmul): GPTQ rounds them plainly, AWQ takes the router's
// input for the experts' gate and up.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/model/model.h"

namespace inferscope {

// Rows [n][cols] of the activations one or more matrices multiplied.
struct CalibrationInput {
  int64_t cols = 0;
  std::vector<float> rows;
  int64_t n() const { return cols ? static_cast<int64_t>(rows.size()) / cols : 0; }
  const float* row(int64_t t) const { return rows.data() + t * cols; }
};

struct Calibration {
  int64_t tokens = 0;  // tokens of text read
  // By tensor name ("blk.0.attn_q.weight"); shared between the matrices of one input.
  std::map<std::string, std::shared_ptr<CalibrationInput>> inputs;

  const CalibrationInput* input_of(const std::string& tensor) const;
};

struct CalibrationOptions {
  int64_t max_tokens = 1024;  // of the text (the rest is not read)
  int64_t seq_len = 256;     // tokens per sequence (capped at the model's context)
  int n_threads = 1;
};

// Fails when the text gives fewer than 2 tokens or the model does not load on the CPU backend.
Result<Calibration> collect_calibration(std::shared_ptr<const Model> model, const std::string& text,
                                        const CalibrationOptions& options);

}  // namespace inferscope
