// Splits a Jinja template into text and tag tokens. Whitespace control happens here: `{%-`,
// `-%}` (and the same for `{{ }}` and `{# #}`) strip whitespace next to the tag, and the
// trim_blocks and lstrip_blocks settings, which Hugging Face's apply_chat_template always turns
// on, drop the first newline after a block or comment tag and the spaces and tabs before one
// that starts a line (`{%+` keeps them). As in Jinja, one newline at the end of the template is
// dropped. Comments are dropped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace inferscope::jinja {

struct Token {
  enum class Kind {
    Text,        // literal template text (already whitespace-controlled)
    ExprOpen,    // {{
    ExprClose,   // }}
    StmtOpen,    // {%
    StmtClose,   // %}
    Name,        // identifiers and keywords
    String,      // string literal, escapes resolved
    Integer,
    Float,
    Operator,    // + - * / // % ** ~ == != < <= > >= = ( ) [ ] { } , . : |
    End,
  };
  Kind kind;
  std::string text;
  int line;
};

// Throws JinjaError on an unterminated tag, string or comment, or an unexpected character.
std::vector<Token> tokenize(std::string_view source);

}  // namespace inferscope::jinja
