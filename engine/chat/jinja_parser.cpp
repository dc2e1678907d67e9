#include "engine/chat/jinja_parser.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <initializer_list>

#include "engine/chat/jinja_lexer.h"

namespace inferscope::jinja {

namespace {

using ExprPtr = std::unique_ptr<Expr>;

class Parser {
 public:
  Parser(std::vector<Token> tokens, int max_depth) : tokens_(std::move(tokens)), max_depth_(max_depth) {}

  Template run() {
    Template t;
    t.body = parse_body({});
    return t;
  }

 private:
  // Counts nesting on the way down; every recursive production holds one.
  class DepthGuard {
   public:
    explicit DepthGuard(Parser& p) : p_(p) {
      if (++p_.depth_ > p_.max_depth_) {
        throw LimitError(Limit::Nesting, "template line " + std::to_string(p_.peek().line) +
                                             ": blocks and expressions nested deeper than " +
                                             std::to_string(p_.max_depth_) + " levels");
      }
    }
    ~DepthGuard() { --p_.depth_; }

   private:
    Parser& p_;
  };

  [[noreturn]] void fail(const std::string& what) const {
    throw JinjaError("template line " + std::to_string(peek().line) + ": " + what);
  }

  const Token& peek(size_t ahead = 0) const {
    const size_t i = std::min(pos_ + ahead, tokens_.size() - 1);
    return tokens_[i];
  }
  const Token& next() {
    const Token& t = peek();
    if (pos_ < tokens_.size() - 1) ++pos_;
    return t;
  }
  bool is_operator(std::string_view op, size_t ahead = 0) const {
    return peek(ahead).kind == Token::Kind::Operator && peek(ahead).text == op;
  }
  bool is_name(std::string_view name, size_t ahead = 0) const {
    return peek(ahead).kind == Token::Kind::Name && peek(ahead).text == name;
  }
  bool accept_operator(std::string_view op) {
    if (!is_operator(op)) return false;
    next();
    return true;
  }
  bool accept_name(std::string_view name) {
    if (!is_name(name)) return false;
    next();
    return true;
  }
  void expect_operator(std::string_view op) {
    if (!accept_operator(op)) fail("expected '" + std::string(op) + "', found " + describe(peek()));
  }
  void expect_name(std::string_view name) {
    if (!accept_name(name)) fail("expected '" + std::string(name) + "', found " + describe(peek()));
  }
  std::string expect_identifier() {
    if (peek().kind != Token::Kind::Name) fail("expected a name, found " + describe(peek()));
    return next().text;
  }
  void expect_kind(Token::Kind kind, const char* what) {
    if (peek().kind != kind) fail(std::string("expected ") + what + ", found " + describe(peek()));
    next();
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Token::Kind::Text: return "text";
      case Token::Kind::ExprOpen: return "'{{'";
      case Token::Kind::ExprClose: return "'}}'";
      case Token::Kind::StmtOpen: return "'{%'";
      case Token::Kind::StmtClose: return "'%}'";
      case Token::Kind::End: return "the end of the template";
      default: return "'" + t.text + "'";
    }
  }

  ExprPtr make(Expr::Kind kind) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = peek().line;
    return e;
  }
  std::unique_ptr<Node> make_node(Node::Kind kind) {
    auto n = std::make_unique<Node>();
    n->kind = kind;
    n->line = peek().line;
    return n;
  }

  // ---- statements ----

  // Parses until `{% <terminator>` (left unconsumed after the `{%`) or the end of the template.
  Body parse_body(std::initializer_list<std::string_view> terminators) {
    DepthGuard guard(*this);
    Body body;
    while (true) {
      const Token& t = peek();
      if (t.kind == Token::Kind::End) {
        if (terminators.size() != 0) fail("missing {% " + std::string(*(terminators.end() - 1)) + " %}");
        return body;
      }
      if (t.kind == Token::Kind::Text) {
        auto n = make_node(Node::Kind::Text);
        n->text = next().text;
        body.push_back(std::move(n));
      } else if (t.kind == Token::Kind::ExprOpen) {
        next();
        auto n = make_node(Node::Kind::Output);
        n->expr = parse_expression();
        expect_kind(Token::Kind::ExprClose, "'}}'");
        body.push_back(std::move(n));
      } else if (t.kind == Token::Kind::StmtOpen) {
        for (std::string_view term : terminators) {
          if (is_name(term, 1)) {
            next();
            return body;
          }
        }
        next();
        body.push_back(parse_statement());
      } else {
        fail("unexpected " + describe(t));
      }
    }
  }

  std::unique_ptr<Node> parse_statement() {
    const std::string keyword = expect_identifier();
    if (keyword == "if") return parse_if();
    if (keyword == "for") return parse_for();
    if (keyword == "set") return parse_set();
    if (keyword == "macro") return parse_macro();
    if (keyword == "generation") return parse_generation();
    if (keyword == "break" || keyword == "continue") {
      auto n = make_node(keyword == "break" ? Node::Kind::Break : Node::Kind::Continue);
      expect_kind(Token::Kind::StmtClose, "'%}'");
      return n;
    }
    fail("unknown or unsupported tag '" + keyword + "'");
  }

  // transformers' {% generation %}...{% endgeneration %} marks the assistant's text for training
  // masks; rendering it is rendering its body (an `if` that always holds).
  std::unique_ptr<Node> parse_generation() {
    auto n = make_node(Node::Kind::If);
    expect_kind(Token::Kind::StmtClose, "'%}'");
    Body body = parse_body({"endgeneration"});
    next();  // endgeneration
    expect_kind(Token::Kind::StmtClose, "'%}'");
    n->branches.emplace_back(literal(Value::boolean(true)), std::move(body));
    return n;
  }

  std::unique_ptr<Node> parse_if() {
    auto n = make_node(Node::Kind::If);
    auto condition = parse_expression();
    while (true) {
      expect_kind(Token::Kind::StmtClose, "'%}'");
      Body body = parse_body({"elif", "else", "endif"});
      n->branches.emplace_back(std::move(condition), std::move(body));
      const std::string keyword = next().text;
      if (keyword == "elif") {
        condition = parse_expression();
        continue;
      }
      if (keyword == "else") {
        expect_kind(Token::Kind::StmtClose, "'%}'");
        n->else_body = parse_body({"endif"});
        next();
      }
      expect_kind(Token::Kind::StmtClose, "'%}'");
      return n;
    }
  }

  std::unique_ptr<Node> parse_for() {
    auto n = make_node(Node::Kind::For);
    n->names.push_back(expect_identifier());
    while (accept_operator(",")) n->names.push_back(expect_identifier());
    expect_name("in");
    n->expr = parse_or();
    if (accept_name("if")) n->condition = parse_expression();
    expect_kind(Token::Kind::StmtClose, "'%}'");
    n->body = parse_body({"else", "endfor"});
    if (next().text == "else") {
      expect_kind(Token::Kind::StmtClose, "'%}'");
      n->else_body = parse_body({"endfor"});
      next();
    }
    expect_kind(Token::Kind::StmtClose, "'%}'");
    return n;
  }

  std::unique_ptr<Node> parse_set() {
    auto n = make_node(Node::Kind::Set);
    n->names.push_back(expect_identifier());
    if (accept_operator(".")) n->names.push_back(expect_identifier());
    if (peek().kind == Token::Kind::StmtClose) {  // {% set name %}...{% endset %}: the block's text
      next();
      n->body = parse_body({"endset"});
      next();
      expect_kind(Token::Kind::StmtClose, "'%}'");
      return n;
    }
    if (!is_operator("=")) {
      fail("only `{% set name = value %}`, `{% set ns.attr = value %}` and `{% set name %}...{% endset %}` are supported");
    }
    next();
    n->expr = parse_expression();
    expect_kind(Token::Kind::StmtClose, "'%}'");
    return n;
  }

  std::unique_ptr<Node> parse_macro() {
    auto n = make_node(Node::Kind::Macro);
    n->names.push_back(expect_identifier());
    expect_operator("(");
    while (!accept_operator(")")) {
      if (n->names.size() > 1) expect_operator(",");
      n->names.push_back(expect_identifier());
      n->defaults.push_back(accept_operator("=") ? parse_expression() : nullptr);
    }
    expect_kind(Token::Kind::StmtClose, "'%}'");
    n->body = parse_body({"endmacro"});
    next();
    expect_kind(Token::Kind::StmtClose, "'%}'");
    return n;
  }

  // ---- expressions, loosest binding first ----

  ExprPtr parse_expression() {
    DepthGuard guard(*this);
    ExprPtr value = parse_or();
    while (is_name("if")) {
      next();
      auto t = make(Expr::Kind::Ternary);
      auto condition = parse_or();
      ExprPtr otherwise = accept_name("else") ? parse_expression() : nullptr;
      t->operands.push_back(std::move(value));
      t->operands.push_back(std::move(condition));
      t->operands.push_back(std::move(otherwise));
      value = std::move(t);
    }
    return value;
  }

  ExprPtr binary(std::string op, ExprPtr left, ExprPtr right) {
    auto e = make(Expr::Kind::Binary);
    e->name = std::move(op);
    e->operands.push_back(std::move(left));
    e->operands.push_back(std::move(right));
    return e;
  }

  ExprPtr parse_or() {
    ExprPtr left = parse_and();
    while (accept_name("or")) left = binary("or", std::move(left), parse_and());
    return left;
  }

  ExprPtr parse_and() {
    ExprPtr left = parse_not();
    while (accept_name("and")) left = binary("and", std::move(left), parse_not());
    return left;
  }

  ExprPtr parse_not() {
    DepthGuard guard(*this);
    if (is_name("not") && !is_name("in", 1)) {
      next();
      auto e = make(Expr::Kind::Unary);
      e->name = "not";
      e->operands.push_back(parse_not());
      return e;
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    ExprPtr left = parse_math1();
    while (true) {
      const Token& t = peek();
      if (t.kind == Token::Kind::Operator &&
          (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == "<=" || t.text == ">" || t.text == ">=")) {
        const std::string op = next().text;
        left = binary(op, std::move(left), parse_math1());
      } else if (is_name("in")) {
        next();
        left = binary("in", std::move(left), parse_math1());
      } else if (is_name("not") && is_name("in", 1)) {
        next();
        next();
        left = binary("not in", std::move(left), parse_math1());
      } else {
        return left;
      }
    }
  }

  ExprPtr parse_math1() {
    ExprPtr left = parse_concat();
    while (is_operator("+") || is_operator("-")) {
      const std::string op = next().text;
      left = binary(op, std::move(left), parse_concat());
    }
    return left;
  }

  ExprPtr parse_concat() {
    ExprPtr left = parse_math2();
    while (accept_operator("~")) left = binary("~", std::move(left), parse_math2());
    return left;
  }

  ExprPtr parse_math2() {
    ExprPtr left = parse_pow();
    while (is_operator("*") || is_operator("/") || is_operator("//") || is_operator("%")) {
      const std::string op = next().text;
      left = binary(op, std::move(left), parse_pow());
    }
    return left;
  }

  ExprPtr parse_pow() {
    ExprPtr left = parse_unary(true);
    while (accept_operator("**")) left = binary("**", std::move(left), parse_unary(true));
    return left;
  }

  ExprPtr parse_unary(bool with_filters) {
    DepthGuard guard(*this);
    ExprPtr e;
    if (is_operator("-") || is_operator("+")) {
      e = make(Expr::Kind::Unary);
      e->name = next().text;
      e->operands.push_back(parse_unary(false));
    } else {
      e = parse_postfix(parse_primary());
    }
    if (!with_filters) return e;
    return parse_filters_and_tests(std::move(e));
  }

  ExprPtr literal(Value v) {
    auto e = make(Expr::Kind::Literal);
    e->literal = std::move(v);
    return e;
  }

  ExprPtr parse_primary() {
    const Token& t = peek();
    switch (t.kind) {
      case Token::Kind::Name: return parse_name();
      case Token::Kind::String: {
        std::string s = next().text;
        while (peek().kind == Token::Kind::String) s += next().text;  // adjacent literals join
        return literal(Value::string(std::move(s)));
      }
      case Token::Kind::Integer: {
        int64_t v = 0;
        const std::string& text = next().text;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc()) fail("integer literal out of range");
        return literal(Value::integer(v));
      }
      case Token::Kind::Float: return literal(Value::number(std::strtod(next().text.c_str(), nullptr)));
      case Token::Kind::Operator:
        if (t.text == "(") return parse_parenthesized();
        if (t.text == "[") return parse_list();
        if (t.text == "{") return parse_dict();
        break;
      default: break;
    }
    fail("unexpected " + describe(t) + " in an expression");
  }

  ExprPtr parse_name() {
    const std::string name = next().text;
    if (name == "true" || name == "True") return literal(Value::boolean(true));
    if (name == "false" || name == "False") return literal(Value::boolean(false));
    if (name == "none" || name == "None") return literal(Value::none());
    auto e = make(Expr::Kind::Name);
    e->name = name;
    return e;
  }

  // `(x)` groups; `(a, b)` and `()` are tuples, which behave as lists here.
  ExprPtr parse_parenthesized() {
    next();
    if (accept_operator(")")) return make(Expr::Kind::List);
    ExprPtr first = parse_expression();
    if (accept_operator(")")) return first;
    auto list = make(Expr::Kind::List);
    list->operands.push_back(std::move(first));
    while (accept_operator(",")) {
      if (is_operator(")")) break;
      list->operands.push_back(parse_expression());
    }
    expect_operator(")");
    return list;
  }

  ExprPtr parse_list() {
    next();
    auto list = make(Expr::Kind::List);
    while (!accept_operator("]")) {
      if (!list->operands.empty()) {
        expect_operator(",");
        if (accept_operator("]")) break;
      }
      list->operands.push_back(parse_expression());
    }
    return list;
  }

  ExprPtr parse_dict() {
    next();
    auto dict = make(Expr::Kind::Dict);
    while (!accept_operator("}")) {
      if (!dict->operands.empty()) {
        expect_operator(",");
        if (accept_operator("}")) break;
      }
      dict->operands.push_back(parse_expression());
      expect_operator(":");
      dict->operands.push_back(parse_expression());
    }
    return dict;
  }

  ExprPtr parse_postfix(ExprPtr e) {
    while (true) {
      if (accept_operator(".")) {
        auto a = make(Expr::Kind::Attribute);
        if (peek().kind == Token::Kind::Integer) {  // `x.0` is x[0] in Jinja
          auto s = make(Expr::Kind::Subscript);
          s->operands.push_back(std::move(e));
          s->operands.push_back(parse_primary());
          e = std::move(s);
          continue;
        }
        a->name = expect_identifier();
        a->operands.push_back(std::move(e));
        e = std::move(a);
      } else if (is_operator("[")) {
        e = parse_subscript(std::move(e));
      } else if (is_operator("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr object) {
    next();
    ExprPtr parts[3];
    int n_parts = 1;
    if (!is_operator(":")) parts[0] = parse_expression();
    if (accept_operator(":")) {
      n_parts = 2;
      if (!is_operator(":") && !is_operator("]")) parts[1] = parse_expression();
      if (accept_operator(":")) {
        n_parts = 3;
        if (!is_operator("]")) parts[2] = parse_expression();
      }
    }
    expect_operator("]");
    if (n_parts == 1 && !parts[0]) fail("empty subscript");
    auto e = make(n_parts == 1 ? Expr::Kind::Subscript : Expr::Kind::Slice);
    e->operands.push_back(std::move(object));
    for (int i = 0; i < (n_parts == 1 ? 1 : 3); ++i) e->operands.push_back(std::move(parts[i]));
    return e;
  }

  // Arguments in parentheses: positional, then `name=value`.
  void parse_arguments(Expr& e) {
    expect_operator("(");
    bool first = true;
    while (!accept_operator(")")) {
      if (!first) {
        expect_operator(",");
        if (accept_operator(")")) break;
      }
      first = false;
      if (peek().kind == Token::Kind::Name && is_operator("=", 1)) {
        std::string key = next().text;
        next();
        e.keyword_args.emplace_back(std::move(key), parse_expression());
      } else {
        e.operands.push_back(parse_expression());
      }
    }
  }

  ExprPtr parse_call(ExprPtr callee) {
    auto e = make(Expr::Kind::Call);
    e->operands.push_back(std::move(callee));
    parse_arguments(*e);
    return e;
  }

  // `x | f(args) | g`, `x is [not] test [(args) | argument]`.
  ExprPtr parse_filters_and_tests(ExprPtr e) {
    while (true) {
      if (accept_operator("|")) {
        auto f = make(Expr::Kind::Filter);
        f->name = expect_identifier();
        f->operands.push_back(std::move(e));
        if (is_operator("(")) parse_arguments(*f);
        e = parse_postfix(std::move(f));
      } else if (accept_name("is")) {
        auto t = make(Expr::Kind::Test);
        t->negated = accept_name("not");
        t->name = expect_identifier();
        t->operands.push_back(std::move(e));
        if (is_operator("(")) {
          parse_arguments(*t);
        } else if (starts_bare_test_argument()) {
          t->operands.push_back(parse_postfix(parse_primary()));
        }
        e = std::move(t);
      } else {
        return e;
      }
    }
  }

  bool starts_bare_test_argument() const {
    const Token& t = peek();
    if (t.kind == Token::Kind::String || t.kind == Token::Kind::Integer || t.kind == Token::Kind::Float) return true;
    if (t.kind != Token::Kind::Name) return false;
    for (std::string_view keyword : {"and", "or", "else", "if", "is", "in", "not"}) {
      if (t.text == keyword) return false;
    }
    return true;
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  int max_depth_;
};

}  // namespace

Result<Template> parse(std::string_view source, int max_depth) {
  try {
    return Parser(tokenize(source), max_depth).run();
  } catch (const std::exception& e) {  // JinjaError, or std::bad_alloc
    return Status::error(e.what());
  }
}

}  // namespace inferscope::jinja
