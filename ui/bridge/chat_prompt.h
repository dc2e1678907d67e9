// Turns a conversation into a GenerateRequest in the model's chat format (engine types only, no
// Qt): renders the messages with the chat template, parses the special tokens it writes, stops
// at its end-of-turn tokens, and drops the oldest turns when the prompt would not leave the
// reply room in the context.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/chat/chat_template.h"
#include "engine/core/status.h"
#include "engine/runtime/generate_request.h"
#include "engine/tokenizer/tokenizer.h"

namespace inferscope::ui {

// The reply's room: min(max_tokens, n_ctx / 2) tokens stay free after the prompt. A leading
// system message is kept; the conversation after it always starts with a user turn.
Result<GenerateRequest> build_chat_request(const Tokenizer& tokenizer, const ChatTemplate& chat_template,
                                           std::vector<ChatMessage> messages, int64_t n_ctx, int32_t max_tokens);

}  // namespace inferscope::ui
