#include "engine/chat/jinja_lexer.h"

#include <cctype>

#include "engine/chat/jinja_error.h"

namespace inferscope::jinja {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

void rstrip_whitespace(std::string& s) {
  while (!s.empty() && is_space(s.back())) s.pop_back();
}

class Lexer {
 public:
  explicit Lexer(std::string_view source) : src_(source) {}

  std::vector<Token> run() {
    while (pos_ < src_.size()) {
      const size_t tag = find_tag(pos_);
      std::string text(src_.substr(pos_, tag - pos_));
      count_lines(text);
      pos_ = tag;
      if (tag == src_.size()) {
        emit_text(std::move(text), false, false);
        break;
      }
      const char kind = src_[tag + 1];
      const char modifier = tag + 2 < src_.size() ? src_[tag + 2] : '\0';
      const bool has_modifier = modifier == '-' || modifier == '+';
      const bool lstrip = kind != '{' && modifier != '+';
      emit_text(std::move(text), modifier == '-', lstrip);
      pos_ = tag + 2 + (has_modifier ? 1 : 0);
      if (kind == '#') {
        skip_comment();
      } else {
        lex_tag(kind == '{');
      }
    }
    tokens_.push_back({Token::Kind::End, "", line_});
    return std::move(tokens_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw JinjaError("template line " + std::to_string(line_) + ": " + what);
  }

  size_t find_tag(size_t from) const {
    for (size_t i = from; i + 1 < src_.size(); ++i) {
      if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    }
    return src_.size();
  }

  void count_lines(std::string_view s) {
    for (char c : s) line_ += c == '\n';
  }

  // Applies the pending whitespace control to the text before a tag (or the end) and emits it.
  void emit_text(std::string text, bool rstrip, bool lstrip_block) {
    const bool started_at_line_start = at_line_start_;
    if (strip_next_text_) {
      size_t i = 0;
      while (i < text.size() && is_space(text[i])) ++i;
      text.erase(0, i);
      strip_next_text_ = false;
    }
    if (rstrip) {
      rstrip_whitespace(text);
    } else if (lstrip_block) {
      const size_t newline = text.rfind('\n');
      const size_t tail = newline == std::string::npos ? 0 : newline + 1;
      if ((newline != std::string::npos || started_at_line_start) &&
          text.find_first_not_of(" \t", tail) == std::string::npos) {
        text.erase(tail);
      }
    }
    at_line_start_ = false;
    if (!text.empty()) tokens_.push_back({Token::Kind::Text, std::move(text), line_});
  }

  // After a tag: `-` strips all following whitespace; trim_blocks drops one newline after a block.
  void finish_tag(bool strip_after, bool is_block) {
    if (strip_after) {
      strip_next_text_ = true;
    } else if (is_block) {
      if (src_.compare(pos_, 1, "\n") == 0) {
        ++pos_;
        ++line_;
        at_line_start_ = true;
      } else if (src_.compare(pos_, 2, "\r\n") == 0) {
        pos_ += 2;
        ++line_;
        at_line_start_ = true;
      }
    }
  }

  void skip_comment() {
    const size_t end = src_.find("#}", pos_);
    if (end == std::string_view::npos) fail("unterminated comment");
    count_lines(src_.substr(pos_, end - pos_));
    const bool strip_after = end > pos_ && src_[end - 1] == '-';
    pos_ = end + 2;
    finish_tag(strip_after, true);
  }

  void lex_tag(bool is_expression) {
    tokens_.push_back({is_expression ? Token::Kind::ExprOpen : Token::Kind::StmtOpen, "", line_});
    const std::string_view close = is_expression ? "}}" : "%}";
    int depth = 0;
    while (true) {
      while (pos_ < src_.size() && is_space(src_[pos_])) line_ += src_[pos_++] == '\n';
      if (pos_ >= src_.size()) fail(is_expression ? "unterminated {{" : "unterminated {%");
      if (depth == 0) {
        const bool dash = src_[pos_] == '-' && src_.compare(pos_ + 1, 2, close) == 0;
        if (dash || src_.compare(pos_, 2, close) == 0) {
          pos_ += dash ? 3 : 2;
          tokens_.push_back({is_expression ? Token::Kind::ExprClose : Token::Kind::StmtClose, "", line_});
          finish_tag(dash, !is_expression);
          return;
        }
      }
      lex_expression_token(depth);
    }
  }

  void lex_expression_token(int& depth) {
    const char c = src_[pos_];
    if (is_name_start(c)) {
      const size_t start = pos_;
      while (pos_ < src_.size() && is_name_char(src_[pos_])) ++pos_;
      tokens_.push_back({Token::Kind::Name, std::string(src_.substr(start, pos_ - start)), line_});
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      lex_number();
    } else if (c == '\'' || c == '"') {
      lex_string(c);
    } else {
      lex_operator(depth);
    }
  }

  void lex_number() {
    const size_t start = pos_;
    bool is_float = false;
    while (pos_ < src_.size() && std::isdigit(static_cast<unsigned char>(src_[pos_]))) ++pos_;
    if (pos_ + 1 < src_.size() && src_[pos_] == '.' && std::isdigit(static_cast<unsigned char>(src_[pos_ + 1]))) {
      is_float = true;
      ++pos_;
      while (pos_ < src_.size() && std::isdigit(static_cast<unsigned char>(src_[pos_]))) ++pos_;
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      size_t p = pos_ + 1;
      if (p < src_.size() && (src_[p] == '+' || src_[p] == '-')) ++p;
      if (p < src_.size() && std::isdigit(static_cast<unsigned char>(src_[p]))) {
        is_float = true;
        pos_ = p;
        while (pos_ < src_.size() && std::isdigit(static_cast<unsigned char>(src_[pos_]))) ++pos_;
      }
    }
    tokens_.push_back({is_float ? Token::Kind::Float : Token::Kind::Integer, std::string(src_.substr(start, pos_ - start)),
                       line_});
  }

  uint32_t read_hex(int digits) {
    if (pos_ + static_cast<size_t>(digits) > src_.size()) fail("truncated escape in string literal");
    uint32_t value = 0;
    for (int i = 0; i < digits; ++i) {
      const char h = src_[pos_++];
      if (!std::isxdigit(static_cast<unsigned char>(h))) fail("bad escape in string literal");
      value = value * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
    }
    return value;
  }

  // Python's escapes (Jinja decodes string literals with unicode-escape); unknown ones stay as written.
  void lex_string(char quote) {
    const int start_line = line_;
    ++pos_;
    std::string value;
    while (true) {
      if (pos_ >= src_.size()) fail("unterminated string literal");
      const char c = src_[pos_++];
      if (c == quote) break;
      if (c == '\n') ++line_;
      if (c != '\\') {
        value += c;
        continue;
      }
      if (pos_ >= src_.size()) fail("unterminated string literal");
      const char e = src_[pos_++];
      switch (e) {
        case 'n': value += '\n'; break;
        case 't': value += '\t'; break;
        case 'r': value += '\r'; break;
        case 'b': value += '\b'; break;
        case 'f': value += '\f'; break;
        case 'v': value += '\v'; break;
        case '0': value += '\0'; break;
        case '\\': value += '\\'; break;
        case '\'': value += '\''; break;
        case '"': value += '"'; break;
        case '\n': ++line_; break;
        case 'x': append_utf8(value, read_hex(2)); break;
        case 'u': append_utf8(value, read_hex(4)); break;
        case 'U': {
          const uint32_t cp = read_hex(8);
          if (cp > 0x10FFFF) fail("bad escape in string literal");
          append_utf8(value, cp);
          break;
        }
        default: value += '\\'; value += e;
      }
    }
    tokens_.push_back({Token::Kind::String, std::move(value), start_line});
  }

  void lex_operator(int& depth) {
    static constexpr std::string_view kTwoChar[] = {"//", "**", "==", "!=", "<=", ">="};
    for (std::string_view op : kTwoChar) {
      if (src_.compare(pos_, 2, op) == 0) {
        pos_ += 2;
        tokens_.push_back({Token::Kind::Operator, std::string(op), line_});
        return;
      }
    }
    const char c = src_[pos_];
    if (std::string_view("+-*/%~<>=()[]{},.:|").find(c) == std::string_view::npos) {
      fail(std::string("unexpected character '") + c + "' in a tag");
    }
    if (c == '(' || c == '[' || c == '{') ++depth;
    if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    ++pos_;
    tokens_.push_back({Token::Kind::Operator, std::string(1, c), line_});
  }

  std::string_view src_;
  size_t pos_ = 0;
  int line_ = 1;
  bool at_line_start_ = true;
  bool strip_next_text_ = false;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source) {
  // Jinja drops one newline at the very end of a template (keep_trailing_newline=False).
  if (source.ends_with("\r\n")) {
    source.remove_suffix(2);
  } else if (source.ends_with('\n')) {
    source.remove_suffix(1);
  }
  return Lexer(source).run();
}

}  // namespace inferscope::jinja
