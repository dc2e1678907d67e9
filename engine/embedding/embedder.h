// Sentence embeddings from a loaded model, through the shared forward pass on any backend: a
// BERT-family encoder (its final token states pooled as the file says: mean, [CLS] or last),
// or a chat model's own normalized last hidden states (ForwardOptions::hidden_states), pooled
// by their last token (the only one that has seen the whole text). The pooled vector is
// L2-normalized unless asked otherwise, as llama.cpp's embeddings are by default.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/backend/backend_registry.h"
#include "engine/graph/forward_executor.h"
#include "engine/core/status.h"
#include "engine/core/thread_pool.h"
#include "engine/model/model.h"

namespace inferscope {

struct EmbedderOptions {
  int n_threads = 0;      // 0 = automatic: all cores, fewer while other programs keep them busy
  BackendChoice backend;  // CPU unless chosen
  int64_t n_ctx = 0;      // 0 = the model's training context, at most 4096 (longer texts are cut)
  bool normalize = true;  // L2-normalize the pooled vector
};

struct Embedding {
  std::vector<float> values;    // [dimension()]
  std::vector<int32_t> tokens;  // what was embedded (with [CLS]/[SEP] or BOS as the model adds)
  bool truncated = false;       // the text had more tokens than the context; the rest was cut
};

class Embedder {
 public:
  static Result<std::unique_ptr<Embedder>> create(std::shared_ptr<const Model> model, const EmbedderOptions& options);

  Result<Embedding> embed(const std::string& text);

  int64_t dimension() const { return model_->config().n_embd; }
  Pooling pooling() const { return pooling_; }
  const ThreadPool& pool() const { return *pool_; }
  const Model& model() const { return *model_; }
  // "<model file>:<size>:<pooling>[:raw]": what makes two embedders' vectors comparable (the
  // semantic cache keys entries by it).
  std::string identity() const;

 private:
  Embedder() = default;

  std::shared_ptr<const Model> model_;
  EmbedderOptions options_;
  Pooling pooling_ = Pooling::Last;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<ForwardExecutor> forward_;
  std::vector<float> states_;  // [tokens][n_embd] of the last call
};

// The pooled vector of n token states ([n][width] rows): their mean, the first or the last row.
std::vector<float> pool_states(const float* states, int64_t n, int64_t width, Pooling pooling);

// v / ||v||_2 (unchanged when the norm is 0).
void l2_normalize(std::vector<float>& v);

}  // namespace inferscope
