// Renders a parsed Jinja template against global variables. Scoping follows Jinja: a for-loop
// body and a macro body have their own variables (which is why templates use namespace() to
// carry state out of loops); `if` does not. Built-in functions: range, namespace,
// raise_exception (its message becomes the error), strftime_now. Every render runs on a Budget
// (jinja_budget.h): a runaway template fails with an error naming the limit it reached instead
// of hanging, filling memory or overflowing the stack.
#pragma once

#include <cstdint>
#include <string>

#include "engine/chat/jinja_budget.h"
#include "engine/chat/jinja_parser.h"
#include "engine/chat/jinja_value.h"
#include "engine/core/status.h"

namespace inferscope::jinja {

// `globals` is a dict of the template's variables (messages, add_generation_prompt, ...). When
// a limit stopped the render and `stopped_by` is given, it is set to that limit (else None).
Result<std::string> render(const Template& tmpl, const Value& globals, const RenderOptions& options = {},
                           Limit* stopped_by = nullptr);

}  // namespace inferscope::jinja
