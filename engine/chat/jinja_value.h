// The values a Jinja template computes with: Python's none/bool/int/float/str/list/dict plus
// Jinja's "undefined", macros and built-in functions. Lists and dicts are shared (reference
// semantics, as in Python), which is what lets `namespace()` attributes change inside loops.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace inferscope::jinja {

// Thrown inside the lexer, parser and interpreter; converted to a Status at the public API.
class JinjaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Node;
class Value;
using ValueList = std::vector<Value>;
// Insertion-ordered, like Python's dict: tojson and items() keep the author's order.
using ValueDict = std::vector<std::pair<std::string, Value>>;

class Value {
 public:
  enum class Kind { Undefined, None, Bool, Int, Float, String, List, Dict, Macro, Function };

  Value() = default;  // undefined
  static Value none();
  static Value boolean(bool b);
  static Value integer(int64_t i);
  static Value number(double d);
  static Value string(std::string s);
  static Value list(ValueList items = {});
  static Value dict(ValueDict items = {});
  static Value macro(const Node* definition);
  static Value function(std::string name);  // a built-in such as range() or raise_exception()

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::Undefined; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_number() const { return kind_ == Kind::Int || kind_ == Kind::Float || kind_ == Kind::Bool; }
  bool is_list() const { return kind_ == Kind::List; }
  bool is_dict() const { return kind_ == Kind::Dict; }
  bool is_callable() const { return kind_ == Kind::Macro || kind_ == Kind::Function; }

  bool as_bool() const { return bool_; }
  int64_t as_int() const;     // bool/int/float (truncated)
  double as_double() const;   // bool/int/float
  const std::string& as_string() const { return string_; }  // string, function name
  ValueList& items() const { return *list_; }
  ValueDict& entries() const { return *dict_; }
  const Node* macro_definition() const { return macro_; }

  // Dict lookup; undefined when absent (or when this is not a dict).
  Value get(std::string_view key) const;
  void set(std::string_view key, Value value) const;  // dicts only

  bool truthy() const;                  // Python's bool()
  std::string to_output() const;        // what {{ }} prints: str(), undefined -> ""
  std::string to_repr() const;          // Python's repr(), used inside lists and dicts
  std::string to_json(int indent, int depth = 0) const;  // indent < 0: one line, Python's separators
  std::string type_name() const;

  friend bool operator==(const Value& a, const Value& b);

 private:
  Kind kind_ = Kind::Undefined;
  bool bool_ = false;
  int64_t int_ = 0;
  double float_ = 0;
  std::string string_;
  std::shared_ptr<ValueList> list_;
  std::shared_ptr<ValueDict> dict_;
  const Node* macro_ = nullptr;
};

// Python's ordering for numbers and strings; an error for other pairs.
int compare_values(const Value& a, const Value& b);

}  // namespace inferscope::jinja
