#include "engine/chat/jinja_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace inferscope::jinja {

namespace {

// Python's repr() of a float: the shortest text that reads back exactly, with ".0" on whole numbers.
std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  std::string s(buf, end);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string string_repr(const std::string& s) {
  const char quote = (s.find('\'') != std::string::npos && s.find('"') == std::string::npos) ? '"' : '\'';
  std::string out(1, quote);
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c == quote) out += '\\';
        out += c;
    }
  }
  return out + quote;
}

// json.dumps(ensure_ascii=False): only quotes, backslashes and control characters are escaped.
std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string json_newline(int indent, int depth) {
  return "\n" + std::string(static_cast<size_t>(indent * depth), ' ');
}

// Appends `piece`, keeping `out` within the output limit and charging the bytes as work.
void append(std::string& out, std::string_view piece, Budget& budget) {
  budget.fits_string(out.size() + piece.size());
  budget.work(piece.size());
  out += piece;
}

const std::string& empty_string() {
  static const std::string empty;
  return empty;
}

}  // namespace

Value Value::none() {
  Value v;
  v.kind_ = Kind::None;
  return v;
}
Value Value::boolean(bool b) {
  Value v;
  v.kind_ = Kind::Bool;
  v.bool_ = b;
  return v;
}
Value Value::integer(int64_t i) {
  Value v;
  v.kind_ = Kind::Int;
  v.int_ = i;
  return v;
}
Value Value::number(double d) {
  Value v;
  v.kind_ = Kind::Float;
  v.float_ = d;
  return v;
}
Value Value::string(std::string s) {
  Value v;
  v.kind_ = Kind::String;
  v.string_ = std::make_shared<const std::string>(std::move(s));
  return v;
}

void Value::take_depth_of(const Value& item) {
  if (item.depth_ >= kMaxValueDepth) {
    throw LimitError(Limit::ValueDepth, "template nests lists and dicts deeper than " + std::to_string(kMaxValueDepth));
  }
  depth_ = std::max<uint8_t>(depth_, static_cast<uint8_t>(item.depth_ + 1));
  holds_namespace_ = holds_namespace_ || item.holds_namespace();
}

Value Value::list(ValueList items) {
  Value v;
  v.kind_ = Kind::List;
  v.depth_ = 1;
  for (const Value& item : items) v.take_depth_of(item);
  v.list_ = std::make_shared<ValueList>(std::move(items));
  return v;
}
Value Value::dict(ValueDict items) {
  Value v;
  v.kind_ = Kind::Dict;
  v.depth_ = 1;
  for (const DictEntry& e : items) {
    if (!e.key.is_string() && e.key.kind() != Kind::Int) throw JinjaError("dict keys must be strings or integers");
    v.take_depth_of(e.value);
  }
  v.dict_ = std::make_shared<ValueDict>(std::move(items));
  return v;
}
Value Value::namespace_of(ValueDict items) {
  Value v = dict(std::move(items));
  if (v.holds_namespace_) throw JinjaError("a namespace cannot hold another namespace");
  v.is_namespace_ = true;
  return v;
}
Value Value::macro(const Node* definition) {
  Value v;
  v.kind_ = Kind::Macro;
  v.macro_ = definition;
  return v;
}
Value Value::function(std::string name) {
  Value v;
  v.kind_ = Kind::Function;
  v.string_ = std::make_shared<const std::string>(std::move(name));
  return v;
}

int64_t Value::as_int() const {
  switch (kind_) {
    case Kind::Bool: return bool_ ? 1 : 0;
    case Kind::Int: return int_;
    case Kind::Float:
      if (!std::isfinite(float_) || std::fabs(float_) > 9.2e18) throw JinjaError("float out of integer range");
      return static_cast<int64_t>(float_);
    default: throw JinjaError("expected a number, got " + type_name());
  }
}

double Value::as_double() const {
  if (kind_ == Kind::Float) return float_;
  return static_cast<double>(as_int());
}

const std::string& Value::as_string() const { return string_ ? *string_ : empty_string(); }

Value Value::get(std::string_view key) const {
  if (kind_ != Kind::Dict) return Value();
  for (const DictEntry& e : *dict_) {
    if (e.has_key(key)) return e.value;
  }
  return Value();
}

Value Value::get(const Value& key) const {
  if (kind_ != Kind::Dict) return Value();
  for (const DictEntry& e : *dict_) {
    if (same_key(e.key, key)) return e.value;
  }
  return Value();
}

void Value::set(std::string_view key, Value value) const {
  for (DictEntry& e : *dict_) {
    if (e.has_key(key)) {
      e.value = std::move(value);
      return;
    }
  }
  dict_->emplace_back(std::string(key), std::move(value));
}

DictEntry::DictEntry(std::string k, Value v) : key(Value::string(std::move(k))), value(std::move(v)) {}
DictEntry::DictEntry(Value k, Value v) : key(std::move(k)), value(std::move(v)) {}

bool same_key(const Value& a, const Value& b) {
  if (a.is_string() && b.is_string()) return a.as_string() == b.as_string();
  return a.kind() == Value::Kind::Int && b.kind() == Value::Kind::Int && a.as_int() == b.as_int();
}

void Value::set_attribute(std::string_view key, Value value) const {
  if (!is_namespace_) throw JinjaError("cannot set attribute '" + std::string(key) + "' of a " + type_name() + " (not a namespace)");
  if (value.holds_namespace()) throw JinjaError("a namespace cannot hold another namespace");
  if (value.depth_ >= kMaxValueDepth) {
    throw LimitError(Limit::ValueDepth, "template nests lists and dicts deeper than " + std::to_string(kMaxValueDepth));
  }
  set(key, std::move(value));
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::Undefined:
    case Kind::None: return false;
    case Kind::Bool: return bool_;
    case Kind::Int: return int_ != 0;
    case Kind::Float: return float_ != 0;
    case Kind::String: return !string_->empty();
    case Kind::List: return !list_->empty();
    case Kind::Dict: return !dict_->empty();
    default: return true;
  }
}

std::string Value::to_output(Budget& budget) const {
  switch (kind_) {
    case Kind::Undefined: return "";
    case Kind::String: return *string_;
    default: return to_repr(budget);
  }
}

std::string Value::to_repr(Budget& budget) const {
  std::string out;
  append_repr(out, budget);
  return out;
}

void Value::append_repr(std::string& out, Budget& budget) const {
  budget.work(sizeof(Value));
  switch (kind_) {
    case Kind::Undefined: return;
    case Kind::None: return append(out, "None", budget);
    case Kind::Bool: return append(out, bool_ ? "True" : "False", budget);
    case Kind::Int: return append(out, std::to_string(int_), budget);
    case Kind::Float: return append(out, float_repr(float_), budget);
    case Kind::String:
      budget.fits_string(out.size() + string_->size());
      return append(out, string_repr(*string_), budget);
    case Kind::List:
      append(out, "[", budget);
      for (size_t i = 0; i < list_->size(); ++i) {
        if (i) append(out, ", ", budget);
        (*list_)[i].append_repr(out, budget);
      }
      return append(out, "]", budget);
    case Kind::Dict:
      append(out, "{", budget);
      for (size_t i = 0; i < dict_->size(); ++i) {
        if (i) append(out, ", ", budget);
        const DictEntry& e = (*dict_)[i];
        e.key.append_repr(out, budget);
        append(out, ": ", budget);
        e.value.append_repr(out, budget);
      }
      return append(out, "}", budget);
    case Kind::Macro: return append(out, "<macro>", budget);
    case Kind::Function: return append(out, "<function " + *string_ + ">", budget);
  }
}

std::string Value::to_json(int indent, Budget& budget) const {
  std::string out;
  append_json(out, indent, 0, budget);
  return out;
}

void Value::append_json(std::string& out, int indent, int level, Budget& budget) const {
  budget.work(sizeof(Value));
  switch (kind_) {
    case Kind::Undefined:
    case Kind::None: return append(out, "null", budget);
    case Kind::Bool: return append(out, bool_ ? "true" : "false", budget);
    case Kind::Int: return append(out, std::to_string(int_), budget);
    case Kind::Float: return append(out, float_repr(float_), budget);
    case Kind::String:
      budget.fits_string(out.size() + string_->size());
      return append(out, json_string(*string_), budget);
    case Kind::List:
    case Kind::Dict: {
      const bool is_dict_value = kind_ == Kind::Dict;
      const size_t n = is_dict_value ? dict_->size() : list_->size();
      append(out, is_dict_value ? "{" : "[", budget);
      for (size_t i = 0; i < n; ++i) {
        if (i) append(out, indent < 0 ? ", " : ",", budget);
        if (indent >= 0) append(out, json_newline(indent, level + 1), budget);
        if (is_dict_value) {
          // JSON keys are strings: json.dumps writes an integer key as its decimal text.
          const DictEntry& e = (*dict_)[i];
          const std::string key = e.key.is_string() ? e.key.as_string() : std::to_string(e.key.as_int());
          budget.fits_string(out.size() + key.size());
          append(out, json_string(key) + ": ", budget);
          e.value.append_json(out, indent, level + 1, budget);
        } else {
          (*list_)[i].append_json(out, indent, level + 1, budget);
        }
      }
      if (indent >= 0 && n > 0) append(out, json_newline(indent, level), budget);
      return append(out, is_dict_value ? "}" : "]", budget);
    }
    default: throw JinjaError("cannot convert a " + type_name() + " to JSON");
  }
}

std::string Value::type_name() const {
  switch (kind_) {
    case Kind::Undefined: return "undefined";
    case Kind::None: return "none";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "string";
    case Kind::List: return "list";
    case Kind::Dict: return "dict";
    case Kind::Macro: return "macro";
    case Kind::Function: return "function";
  }
  return "?";
}

bool Value::equal(const Value& a, const Value& b, Budget& budget) {
  budget.work(sizeof(Value));
  if (a.is_number() && b.is_number()) {
    if (a.kind_ == Kind::Float || b.kind_ == Kind::Float) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind_ != b.kind_) return false;
  switch (a.kind_) {
    case Kind::Undefined:
    case Kind::None: return true;
    case Kind::String:
    case Kind::Function:
      if (a.string_ == b.string_) return true;
      budget.work(std::min(a.string_->size(), b.string_->size()));
      return *a.string_ == *b.string_;
    case Kind::List: {
      if (a.list_ == b.list_) return true;
      if (a.list_->size() != b.list_->size()) return false;
      for (size_t i = 0; i < a.list_->size(); ++i) {
        if (!equal((*a.list_)[i], (*b.list_)[i], budget)) return false;
      }
      return true;
    }
    case Kind::Dict: {
      if (a.dict_ == b.dict_) return true;
      if (a.dict_->size() != b.dict_->size()) return false;
      for (size_t i = 0; i < a.dict_->size(); ++i) {
        const DictEntry& ea = (*a.dict_)[i];
        const DictEntry& eb = (*b.dict_)[i];
        budget.work(ea.key.as_string().size());
        if (!same_key(ea.key, eb.key) || !equal(ea.value, eb.value, budget)) return false;
      }
      return true;
    }
    case Kind::Macro: return a.macro_ == b.macro_;
    default: return false;
  }
}

int compare_values(const Value& a, const Value& b, Budget& budget) {
  if (a.is_number() && b.is_number()) {
    const double x = a.as_double(), y = b.as_double();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (a.is_string() && b.is_string()) {
    budget.work(std::min(a.as_string().size(), b.as_string().size()));
    const int c = a.as_string().compare(b.as_string());
    return (c > 0) - (c < 0);
  }
  throw JinjaError("cannot compare " + a.type_name() + " with " + b.type_name());
}

}  // namespace inferscope::jinja
