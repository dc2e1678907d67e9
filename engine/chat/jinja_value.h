// The values a Jinja template computes with: Python's none/bool/int/float/str/list/dict plus
// Jinja's "undefined", namespaces, macros and built-in functions. Lists and dicts are shared
// (reference semantics, as in Python); strings are shared and immutable, so copying a value is
// cheap. Only a namespace changes after it is made (`{% set ns.attr = ... %}`), and a namespace
// never holds a namespace: values cannot form cycles, and their nesting stays bounded (at most
// kMaxValueDepth for values that hold no namespace), which keeps every traversal off the stack
// limit. Traversals (printing, JSON, comparison) charge the render's Budget.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/chat/jinja_budget.h"
#include "engine/chat/jinja_error.h"

namespace inferscope::jinja {

struct Node;
class Value;
struct DictEntry;
using ValueList = std::vector<Value>;
// Insertion-ordered, like Python's dict: tojson and items() keep the author's order. Keys are
// strings or integers (Seed-OSS's `{0: 0, 512: 128}`).
using ValueDict = std::vector<DictEntry>;

// Lists and dicts nested deeper than this are refused where they are made.
constexpr int kMaxValueDepth = 64;

class Value {
 public:
  enum class Kind { Undefined, None, Bool, Int, Float, String, List, Dict, Macro, Function };

  Value() = default;  // undefined
  static Value none();
  static Value boolean(bool b);
  static Value integer(int64_t i);
  static Value number(double d);
  static Value string(std::string s);
  // Throw a LimitError (value depth) when an item is nested kMaxValueDepth deep already.
  static Value list(ValueList items = {});
  static Value dict(ValueDict items = {});
  // namespace(): a dict whose attributes templates may set. Throws when an item holds a namespace.
  static Value namespace_of(ValueDict items);
  static Value macro(const Node* definition);
  static Value function(std::string name);  // a built-in such as range() or raise_exception()

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::Undefined; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_number() const { return kind_ == Kind::Int || kind_ == Kind::Float || kind_ == Kind::Bool; }
  bool is_list() const { return kind_ == Kind::List; }
  bool is_dict() const { return kind_ == Kind::Dict; }
  bool is_namespace() const { return is_namespace_; }
  bool is_callable() const { return kind_ == Kind::Macro || kind_ == Kind::Function; }
  // Lists and dicts inside each other (0 for a scalar), as when the value was made.
  int depth() const { return depth_; }
  // Whether this is a namespace or a list or dict with one inside.
  bool holds_namespace() const { return is_namespace_ || holds_namespace_; }

  bool as_bool() const { return bool_; }
  int64_t as_int() const;     // bool/int/float (truncated)
  double as_double() const;   // bool/int/float
  const std::string& as_string() const;  // string, function name; "" otherwise
  ValueList& items() const { return *list_; }
  ValueDict& entries() const { return *dict_; }
  const Node* macro_definition() const { return macro_; }

  // Dict lookup; undefined when absent (or when this is not a dict).
  Value get(std::string_view key) const;
  // Dict lookup by a string or integer key (subscripts).
  Value get(const Value& key) const;
  // Dicts only: the interpreter's scopes, and namespace attributes (see set_attribute).
  void set(std::string_view key, Value value) const;
  // {% set ns.key = value %}: throws unless this is a namespace and `value` holds none and is
  // shallow enough to keep the namespace within kMaxValueDepth.
  void set_attribute(std::string_view key, Value value) const;

  bool truthy() const;                             // Python's bool()
  std::string to_output(Budget& budget) const;     // what {{ }} prints: str(), undefined -> ""
  std::string to_repr(Budget& budget) const;       // Python's repr(), used inside lists and dicts
  std::string to_json(int indent, Budget& budget) const;  // indent < 0: one line, Python's separators
  std::string type_name() const;

  // Python's ==: numbers by value, strings, lists and dicts element by element.
  static bool equal(const Value& a, const Value& b, Budget& budget);

 private:
  void append_repr(std::string& out, Budget& budget) const;
  void append_json(std::string& out, int indent, int level, Budget& budget) const;
  void take_depth_of(const Value& item);

  Kind kind_ = Kind::Undefined;
  bool bool_ = false;
  bool is_namespace_ = false;
  bool holds_namespace_ = false;
  uint8_t depth_ = 0;
  int64_t int_ = 0;
  double float_ = 0;
  std::shared_ptr<const std::string> string_;
  std::shared_ptr<ValueList> list_;
  std::shared_ptr<ValueDict> dict_;
  const Node* macro_ = nullptr;
};

struct DictEntry {
  DictEntry(std::string k, Value v);  // a string key
  DictEntry(Value k, Value v);        // a string or integer key
  Value key;
  Value value;

  bool has_key(std::string_view text) const { return key.is_string() && key.as_string() == text; }
};

// Whether two dict keys are the same key (strings by text, integers by value).
bool same_key(const Value& a, const Value& b);

// Python's ordering for numbers and strings; an error for other pairs.
int compare_values(const Value& a, const Value& b, Budget& budget);

}  // namespace inferscope::jinja
