#include "engine/chat/chat_prompt.h"

#include <algorithm>
#include <string>

namespace inferscope {

namespace {

// Removes the oldest turn after the kept prefix, then anything up to the next user message.
size_t drop_oldest_turn(std::vector<ChatMessage>& messages, size_t keep) {
  const size_t before = messages.size();
  messages.erase(messages.begin() + static_cast<std::ptrdiff_t>(keep));
  while (messages.size() > keep + 1 && messages[keep].role != "user") {
    messages.erase(messages.begin() + static_cast<std::ptrdiff_t>(keep));
  }
  return before - messages.size();
}

// Once a limit has stopped the file's template, the shorter conversations tried after it (to
// fit the context) go straight to the plain format: each stopped render may cost a second.
Status render_into(const ChatTemplate& chat_template, const std::vector<ChatMessage>& messages, ChatPrompt& prompt) {
  auto text = prompt.fallback_reason.empty() ? chat_template.render_or_plain(messages, true, &prompt.fallback_reason)
                                             : chat_template.render_plain(messages, true);
  if (!text) return text.status();
  prompt.request.prompt = std::move(*text);
  prompt.request.add_special = chat_template.tokenizer_adds_bos(prompt.request.prompt);
  return Status::ok();
}

}  // namespace

Result<ChatPrompt> build_chat_prompt(const Tokenizer& tokenizer, const ChatTemplate& chat_template,
                                     std::vector<ChatMessage> messages, int64_t n_ctx, int32_t max_tokens) {
  ChatPrompt prompt;
  GenerateRequest& req = prompt.request;
  req.max_tokens = max_tokens;
  req.parse_special = true;
  req.stop_token_ids = chat_template.stop_token_ids();
  const int64_t room = std::min<int64_t>(max_tokens, n_ctx / 2);
  const size_t keep = !messages.empty() && messages.front().role == "system" ? 1 : 0;
  while (true) {
    INFERSCOPE_RETURN_IF_ERROR(render_into(chat_template, messages, prompt));
    const auto n_prompt = static_cast<int64_t>(tokenizer.encode(req.prompt, req.add_special, true).size());
    if (n_prompt + room <= n_ctx) return prompt;
    if (messages.size() <= keep + 1) {
      return Status::error("the message takes " + std::to_string(n_prompt) + " tokens; with " + std::to_string(room) +
                           " for the reply it does not fit the context of " + std::to_string(n_ctx) + " tokens");
    }
    prompt.dropped_messages += drop_oldest_turn(messages, keep);
  }
}

}  // namespace inferscope
