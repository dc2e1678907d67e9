#include "engine/reply/draft_models.h"

namespace inferscope::reply {

Result<DraftOptions> DraftModels::prepare(const DraftSettings& settings) {
  DraftOptions draft;
  draft.source = settings.source;
  draft.max_tokens = settings.max_tokens;
  draft.layers = settings.layers;
  if (settings.source != DraftSource::Model) return draft;
  if (settings.model_path.empty()) return Status::error("no draft model file is chosen");
  if (!model_ || path_ != settings.model_path) {
    model_.reset();
    ModelLoadOptions options;
    options.resident_weights = settings.resident_weights;
    auto model = Model::load(settings.model_path, options);
    if (!model) return model.status();
    auto drafter = DraftModel::create(std::move(*model), session_.draft_target());
    if (!drafter) return drafter.status();
    model_ = std::move(*drafter);
    path_ = settings.model_path;
  }
  draft.model = model_;
  return draft;
}

}  // namespace inferscope::reply
