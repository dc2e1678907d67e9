// The errors of the Jinja engine: thrown inside the lexer, parser and interpreter, turned into a
// Status at their public functions. A LimitError names the limit that stopped a template: the
// limits keep templates from model files (untrusted) from hanging, filling memory or the stack.
#pragma once

#include <stdexcept>
#include <string>

namespace inferscope::jinja {

class JinjaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Limit {
  None,
  Nesting,     // blocks and expressions nested in the source, or evaluation nested at run time
  Steps,       // statements, loop iterations and list or dict elements built
  Output,      // bytes of the output, and of any one string
  Work,        // bytes of strings built, copied, scanned or compared, summed over a render
  CallDepth,   // macro calls nested inside each other
  ValueDepth,  // lists and dicts nested inside each other
};

class LimitError : public JinjaError {
 public:
  LimitError(Limit limit, const std::string& what) : JinjaError(what), limit_(limit) {}
  Limit limit() const { return limit_; }

 private:
  Limit limit_;
};

}  // namespace inferscope::jinja
