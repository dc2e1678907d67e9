// Speculative decoding's draft as a reply asks for it (DraftSettings) made into what the
// generation takes (DraftOptions): a draft model is opened for the session on first use and
// kept while its file stays the same.
#pragma once

#include <memory>
#include <string>

#include "engine/core/status.h"
#include "engine/reply/reply_request.h"
#include "engine/runtime/draft_model.h"
#include "engine/runtime/session.h"

namespace inferscope::reply {

class DraftModels {
 public:
  // `session` must outlive the draft models (they run on its backend and threads).
  explicit DraftModels(Session& session) : session_(session) {}

  Result<DraftOptions> prepare(const DraftSettings& settings);
  // The draft model kept, if any (its memory shows while a reply drafts with it).
  const std::shared_ptr<DraftModel>& current() const { return model_; }

 private:
  Session& session_;
  std::shared_ptr<DraftModel> model_;
  std::string path_;  // model_'s file
};

}  // namespace inferscope::reply
