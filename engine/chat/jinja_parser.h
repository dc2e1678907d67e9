// The syntax tree of a Jinja template and the parser that builds it from lexer tokens, with
// Jinja's operator precedence (filters and `is` tests bind tighter than arithmetic; `~` between
// `+` and `*`). Statements: if/elif/else, for (unpacking, `if` filter, else), set (names and
// namespace attributes), macro, break, continue.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/chat/jinja_value.h"
#include "engine/core/status.h"

namespace inferscope::jinja {

struct Expr {
  enum class Kind { Literal, Name, List, Dict, Unary, Binary, Ternary, Attribute, Subscript, Slice, Call, Filter, Test };
  Kind kind;
  int line = 0;
  Value literal;      // Literal
  std::string name;   // Name, Attribute, Filter and Test name; Unary/Binary operator
  bool negated = false;  // Test: `is not`
  // List: items. Dict: key, value, key, value... Unary: operand. Binary: left, right.
  // Ternary: then, condition, else (may be null). Attribute: object. Subscript: object, index.
  // Slice: object, start, stop, step (each may be null). Call: callee, arguments.
  // Filter and Test: input, arguments.
  std::vector<std::unique_ptr<Expr>> operands;
  std::vector<std::pair<std::string, std::unique_ptr<Expr>>> keyword_args;  // Call, Filter
};

struct Node;
using Body = std::vector<std::unique_ptr<Node>>;

struct Node {
  enum class Kind { Text, Output, If, For, Set, Macro, Break, Continue };
  Kind kind;
  int line = 0;
  std::string text;                // Text
  std::unique_ptr<Expr> expr;      // Output; Set value (null for a block set: its body's text); For iterable
  // For: loop variables. Set: {name} or {namespace, attribute}. Macro: {name, parameters...}.
  std::vector<std::string> names;
  std::vector<std::unique_ptr<Expr>> defaults;  // Macro: one per parameter (null: required)
  std::unique_ptr<Expr> condition;              // For: the `if` filter
  std::vector<std::pair<std::unique_ptr<Expr>, Body>> branches;  // If: condition and body each
  Body body;                        // For, Macro, block Set
  Body else_body;                   // If, For
};

struct Template {
  Body body;
};

// An error naming the template line on a syntax error, or on nesting deeper than max_depth
// (expressions and blocks together), which keeps hostile input away from the stack limit.
Result<Template> parse(std::string_view source, int max_depth = 200);

}  // namespace inferscope::jinja
