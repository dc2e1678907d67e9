#include "engine/embedding/embedder.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "engine/graph/forward_pass.h"

namespace inferscope {

std::vector<float> pool_states(const float* states, int64_t n, int64_t width, Pooling pooling) {
  std::vector<float> out(static_cast<size_t>(width), 0.0f);
  if (n <= 0) return out;
  if (pooling == Pooling::Cls || pooling == Pooling::Last) {
    const float* row = states + (pooling == Pooling::Cls ? 0 : n - 1) * width;
    std::copy(row, row + width, out.begin());
    return out;
  }
  std::vector<double> sum(static_cast<size_t>(width), 0.0);
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t i = 0; i < width; ++i) sum[static_cast<size_t>(i)] += states[t * width + i];
  }
  for (int64_t i = 0; i < width; ++i) out[static_cast<size_t>(i)] = static_cast<float>(sum[static_cast<size_t>(i)] / n);
  return out;
}

void l2_normalize(std::vector<float>& v) {
  double squares = 0.0;
  for (float x : v) squares += static_cast<double>(x) * x;
  if (squares <= 0.0) return;
  const auto inv = static_cast<float>(1.0 / std::sqrt(squares));
  for (float& x : v) x *= inv;
}

Result<std::unique_ptr<Embedder>> Embedder::create(std::shared_ptr<const Model> model, const EmbedderOptions& options) {
  auto e = std::unique_ptr<Embedder>(new Embedder());
  const ModelConfig& c = model->config();
  e->model_ = std::move(model);
  e->options_ = options;
  e->pooling_ = c.is_encoder() ? c.pooling : Pooling::Last;
  const int threads = options.n_threads > 0 ? options.n_threads
                                            : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  e->pool_ = std::make_unique<ThreadPool>(threads);
  if (options.n_threads <= 0) e->pool_->adapt();  // it embeds while replies decode (the server, the app)
  ForwardOptions fo;
  fo.n_ctx = options.n_ctx > 0 ? options.n_ctx : std::min<int64_t>(c.n_ctx_train, 4096);
  fo.hidden_states = true;
  fo.host_threads = e->pool_.get();
  auto executor = ForwardPass::open(e->model_, options.backend, fo);
  if (!executor) return executor.status();
  e->forward_ = std::move(*executor);
  return e;
}

Result<Embedding> Embedder::embed(const std::string& text) {
  Embedding result;
  result.tokens = model_->tokenizer().encode(text, true, false);
  if (result.tokens.empty()) return Status::error("nothing to embed: the text gives no tokens");
  const auto limit = static_cast<size_t>(forward_->n_ctx());
  if (result.tokens.size() > limit) {
    // Keep the start, and an encoder's closing [SEP].
    const int32_t closing = result.tokens.back();
    result.tokens.resize(limit);
    if (model_->config().is_encoder()) result.tokens.back() = closing;
    result.truncated = true;
  }
  const auto n = static_cast<int64_t>(result.tokens.size());
  const int64_t width = forward_->output_width();
  states_.resize(static_cast<size_t>(n * width));
  forward_->clear();
  INFERSCOPE_RETURN_IF_ERROR(forward_->forward(0, result.tokens, true, states_.data()));
  result.values = pool_states(states_.data(), n, width, pooling_);
  if (options_.normalize) l2_normalize(result.values);
  return result;
}

std::string Embedder::identity() const {
  const char* pooling = pooling_ == Pooling::Mean ? "mean" : pooling_ == Pooling::Cls ? "cls" : "last";
  return model_->file_identity() + ":" + pooling +
         (options_.normalize ? "" : ":raw");
}

}  // namespace inferscope
