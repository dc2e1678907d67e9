// JSON text as a template value, the way the hub library hands JSON to a chat template: objects
// become dicts (their keys in the text's order), arrays lists, and numbers, strings, booleans and
// null the matching values. Used for tool calls' arguments (OpenAI sends them as JSON text;
// templates expect the object).
#pragma once

#include <string_view>

#include "engine/chat/jinja_value.h"

namespace inferscope::jinja {

// The value `text` holds, or the text itself as a string when it is not JSON.
Value value_from_json_text(std::string_view text);

}  // namespace inferscope::jinja
