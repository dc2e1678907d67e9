#include "engine/runtime/draft_model.h"

#include <algorithm>
#include <string>

#include "engine/graph/forward_pass.h"
#include "engine/sampling/top_k.h"

namespace inferscope {

Status check_draft_vocabulary(const Model& draft, const Model& target) {
  const std::string names = "the draft model " + draft.file().path() + " and the model " + target.file().path();
  const int64_t n_draft = draft.config().n_vocab, n_target = target.config().n_vocab;
  if (n_draft != n_target) {
    return Status::error(names + " have different vocabularies: " + std::to_string(n_draft) + " and " +
                         std::to_string(n_target) + " tokens (a draft model needs the model's vocabulary)");
  }
  const Tokenizer& a = draft.tokenizer();
  const Tokenizer& b = target.tokenizer();
  if (a.n_vocab() != b.n_vocab()) {
    return Status::error(names + " have different tokenizers: " + std::to_string(a.n_vocab()) + " and " +
                         std::to_string(b.n_vocab()) + " tokens");
  }
  for (int32_t id = 0; id < a.n_vocab(); ++id) {
    if (a.token_text(id) != b.token_text(id)) {
      return Status::error(names + " have different vocabularies: token " + std::to_string(id) + " is \"" +
                           a.token_text(id) + "\" in the draft model and \"" + b.token_text(id) + "\" in the model");
    }
  }
  return Status::ok();
}

Result<std::shared_ptr<DraftModel>> DraftModel::create(std::shared_ptr<const Model> draft, const DraftTarget& target) {
  INFERSCOPE_RETURN_IF_ERROR(check_draft_vocabulary(*draft, *target.model));
  if (draft->config().is_encoder()) return Status::error(draft->file().path() + " is an embedding model: it cannot draft");
  ForwardOptions fo;
  fo.n_ctx = target.n_ctx;
  fo.max_batch = target.max_batch;
  fo.kv_types = target.kv_types;
  fo.host_threads = target.threads;
  auto executor = ForwardPass::open(draft, target.backend, fo);
  if (!executor) return Status::error("the draft model " + draft->file().path() + ": " + executor.status().message());
  return std::shared_ptr<DraftModel>(new DraftModel(std::move(draft), std::move(*executor)));
}

DraftModel::DraftModel(std::shared_ptr<const Model> model, std::unique_ptr<ForwardExecutor> executor)
    : model_(std::move(model)),
      executor_(std::move(executor)),
      logits_(static_cast<size_t>(model_->config().n_vocab)) {}

Result<std::vector<int32_t>> DraftModel::draft(std::span<const int32_t> context, int64_t prompt_length,
                                                int64_t max_tokens) {
  const auto n = static_cast<int64_t>(context.size());
  // The context and every drafted token but the last are fed.
  const int64_t length = std::min(max_tokens, executor_->n_ctx() - n + 1);
  std::vector<int32_t> out;
  if (n == 0 || length < 1) return out;
  // The shared prefix stays, less one token when all of it is shared: the last token's logits
  // draft the first token.
  const auto same = std::mismatch(held_.begin(), held_.end(), context.begin(), context.end());
  const auto kept = std::min<int64_t>(same.first - held_.begin(), n - 1);
  executor_->truncate(0, kept);
  held_.resize(static_cast<size_t>(kept));
  out.reserve(static_cast<size_t>(length));
  std::span<const int32_t> feed = context.subspan(static_cast<size_t>(kept));
  const Tokenizer& tok = model_->tokenizer();
  auto prefilled = static_cast<size_t>(std::clamp<int64_t>(prompt_length - kept, 0, n - kept));
  while (true) {
    const Status forwarded = feed_tokens(feed.first(prefilled), feed.subspan(prefilled));
    if (!forwarded) {
      executor_->truncate(0, 0);  // whatever the failed call left, nothing is known to be held
      held_.clear();
      return forwarded;
    }
    held_.insert(held_.end(), feed.begin(), feed.end());
    out.push_back(argmax_logit(logits_));
    if (static_cast<int64_t>(out.size()) == length || tok.is_end_of_generation(out.back())) return out;
    feed = std::span(&out.back(), 1);
    prefilled = 0;
  }
}

uint64_t DraftModel::memory_bytes() const {
  const ExecutorMemory m = executor_->memory();
  return model_->weights().total_bytes + m.device_weight_bytes + m.kv_cache_bytes + m.scratch_bytes;
}

// Feeds prompt tokens as the target prefilled them (forward()), then decoded ones as the target
// decoded them (verify(): each row as a one-token call), so that a draft model that is the target
// holds the target's KV rows bit for bit and drafts exactly its choices. logits_ ends with the
// last token's logits.
Status DraftModel::feed_tokens(std::span<const int32_t> prompt, std::span<const int32_t> decoded) {
  if (!prompt.empty()) INFERSCOPE_RETURN_IF_ERROR(executor_->forward(0, prompt, false, logits_.data()));
  if (decoded.size() <= 1) {
    return decoded.empty() ? Status::ok() : executor_->forward(0, decoded, false, logits_.data());
  }
  const auto n_vocab = static_cast<size_t>(model_->config().n_vocab);
  fed_logits_.resize(decoded.size() * n_vocab);
  INFERSCOPE_RETURN_IF_ERROR(executor_->verify(0, decoded, fed_logits_.data()));
  std::copy_n(fed_logits_.end() - static_cast<std::ptrdiff_t>(n_vocab), n_vocab, logits_.begin());
  return Status::ok();
}

}  // namespace inferscope
