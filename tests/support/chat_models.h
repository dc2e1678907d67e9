// Models with a chat template of the test's choosing, and templates that run past each of the
// Jinja interpreter's limits (engine/chat/jinja_budget.h) the way a hostile model file would.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "engine/core/status.h"

namespace inferscope::testing {

// A copy of the model at `source` with `chat_template` as its tokenizer.chat_template, at `path`.
Status write_with_chat_template(const std::string& source, const std::string& chat_template, const std::string& path);

struct HostileTemplate {
  const char* name;       // a test-name-safe label
  std::string source;     // the template
  const char* stops_with;  // words of the message of the limit that stops it
};

// Test output names the template.
inline void PrintTo(const HostileTemplate& t, std::ostream* os) { *os << t.name; }

// One template per way of running away: a billion-step loop, self-recursive macros, string
// multiplication to gigabytes, nesting past the parser's and the evaluator's depth, a list that
// doubles, a value that nests itself, a print that expands exponentially, quadratic work.
const std::vector<HostileTemplate>& hostile_templates();

}  // namespace inferscope::testing
