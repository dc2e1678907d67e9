// Turns a conversation into a GenerateRequest in the model's chat format, for every chat front
// end (the desktop app, `generate --chat`): renders the messages with the chat template (the
// plain format when the file's template stops at one of its limits), parses the special tokens
// it writes, adds BOS only when the template did not, stops at its end-of-turn tokens, and drops
// the oldest turns when the prompt would not leave the reply room in the context.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/chat/chat_template.h"
#include "engine/core/status.h"
#include "engine/runtime/generate_request.h"
#include "engine/tokenizer/tokenizer.h"

namespace inferscope {

struct ChatPrompt {
  GenerateRequest request;      // prompt, special-token handling, stop tokens, max_tokens
  size_t dropped_messages = 0;  // the oldest turns left out to fit the context
  std::string fallback_reason;  // set when a limit stopped the file's template (plain format used)
};

// The reply's room: min(max_tokens, n_ctx / 2) tokens stay free after the prompt. A leading
// system message is kept; the conversation after it always starts with a user turn.
Result<ChatPrompt> build_chat_prompt(const Tokenizer& tokenizer, const ChatTemplate& chat_template,
                                     std::vector<ChatMessage> messages, int64_t n_ctx, int32_t max_tokens);

}  // namespace inferscope
