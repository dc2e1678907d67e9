// Writes random-weight llama-shape GGUF files (benchmarks at realistic sizes, tests of shapes
// no real small model has), with the tokenizer copied from an existing GGUF.
#pragma once

#include <cstdint>
#include <string>

#include "engine/core/status.h"
#include "kernels/cpu/ggml_type.h"

namespace inferscope {

struct RandomModelShape {
  int64_t n_embd = 2048;
  int64_t n_layer = 22;
  int64_t n_head = 32;
  int64_t n_head_kv = 4;
  int64_t n_ff = 5632;
  int64_t n_expert = 0;       // > 0 writes Mixtral-style merged expert tensors
  int64_t n_expert_used = 0;
  int64_t n_ctx = 2048;
  bool tied_output = false;   // omit output.weight (use token_embd)
};

struct RandomModelSpec {
  RandomModelShape shape;
  kernels::GgmlType type = kernels::GgmlType::F16;  // matrices; norms stay F32
  std::string vocab_path;   // GGUF whose tokenizer.* keys are copied (its vocab size is used)
  std::string name = "random";
  uint64_t seed = 1;
};

// Streams the file to `output_path` row by row (a 1.1B model never sits in memory).
Status write_random_model(const RandomModelSpec& spec, const std::string& output_path);

// "tinyllama-1.1b" and similar named shapes; false when the name is unknown.
bool random_model_preset(const std::string& name, RandomModelShape* shape);

}  // namespace inferscope
