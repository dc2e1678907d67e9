#include "engine/embedding/shared_embedder.h"

namespace inferscope {

Status SharedEmbedder::make_embedder() {
  if (embedder_) return Status::ok();
  auto embedder = Embedder::create(model_, options_);
  if (!embedder) return embedder.status();
  embedder_ = std::move(*embedder);
  return Status::ok();
}

Result<Embedding> SharedEmbedder::embed(const std::string& text) {
  std::lock_guard lock(mutex_);
  INFERSCOPE_RETURN_IF_ERROR(make_embedder());
  return embedder_->embed(text);
}

Result<std::string> SharedEmbedder::identity() {
  std::lock_guard lock(mutex_);
  INFERSCOPE_RETURN_IF_ERROR(make_embedder());
  return embedder_->identity();
}

}  // namespace inferscope
