// Renders a parsed Jinja template against global variables. Scoping follows Jinja: a for-loop
// body and a macro body have their own variables (which is why templates use namespace() to
// carry state out of loops); `if` does not. Built-in functions: range, namespace,
// raise_exception (its message becomes the error), strftime_now. Limits on output size, steps
// and call depth make runaway templates fail with an error instead of hanging or crashing.
#pragma once

#include <cstdint>
#include <string>

#include "engine/chat/jinja_parser.h"
#include "engine/chat/jinja_value.h"
#include "engine/core/status.h"

namespace inferscope::jinja {

struct RenderOptions {
  size_t max_output_bytes = size_t(1) << 22;  // also caps every string the template builds
  int64_t max_steps = int64_t(1) << 20;       // statements executed plus loop iterations
  int max_call_depth = 64;                    // nested macro calls
  int64_t now_unix_seconds = -1;              // strftime_now's clock; -1 = the current time
};

// `globals` is a dict of the template's variables (messages, add_generation_prompt, ...).
Result<std::string> render(const Template& tmpl, const Value& globals, const RenderOptions& options = {});

}  // namespace inferscope::jinja
