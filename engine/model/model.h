// A loaded model: the mapped GGUF file, its hyperparameters, bound weights and tokenizer.
// Immutable after load, so several sessions may share it.
#pragma once

#include <functional>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "engine/core/resident_buffer.h"
#include "engine/core/status.h"
#include "engine/gguf/gguf_file.h"
#include "engine/model/model_config.h"
#include "engine/model/model_weights.h"
#include "engine/tokenizer/tokenizer.h"

namespace inferscope {

struct ModelLoadOptions {
  // Copy the weights into huge-page memory (faster decode) instead of reading them from the
  // file mapping. Falls back to the mapping when the memory is not available.
  bool resident_weights = true;
  // Called on the loading thread with the fraction done (0..1, non-decreasing; 1 when loaded).
  // Most of a large file's load time is the copy of its weights, reported in steps.
  std::function<void(double)> on_progress;
  // Before anything is copied, the memory estimate (weights + KV cache + scratch, see
  // memory_estimate.h) at this context is compared with the available memory, and a model that
  // cannot fit fails to load ("needs X GiB, Y GiB available"). n_ctx and n_threads as the session
  // will use them (0 context: min(training context, 4096), as SessionOptions).
  bool check_memory = true;
  int64_t n_ctx = 0;
  int n_threads = 1;
  // The available memory to compare with; unset: MemAvailable from /proc/meminfo (no check where
  // it cannot be read, see resident_buffer.h). Tests set it.
  std::optional<uint64_t> available_memory_bytes;
};

class Model {
 public:
  static Result<std::shared_ptr<const Model>> load(const std::string& path, const ModelLoadOptions& options = {});
  // The same from a file opened already (a model converted in memory: requantized_model.h).
  // Progress starts after the file's parsing.
  static Result<std::shared_ptr<const Model>> load_file(std::shared_ptr<const gguf::File> file,
                                                        const ModelLoadOptions& options = {});

  const gguf::File& file() const { return *file_; }
  const ModelConfig& config() const { return config_; }
  const ModelWeights& weights() const { return *weights_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  bool weights_resident() const { return resident_ != nullptr; }
  // "<path>:<bytes>": the file as caches key what it computes (prefix blocks, semantic cache).
  std::string file_identity() const { return file_->path() + ":" + std::to_string(file_->file_size()); }

 private:
  Model() = default;
  std::shared_ptr<const gguf::File> file_;
  std::unique_ptr<ResidentBuffer> resident_;  // copy of the tensor data section, when resident
  ModelConfig config_;
  std::unique_ptr<ModelWeights> weights_;
  std::shared_ptr<const Tokenizer> tokenizer_;
};

}  // namespace inferscope
