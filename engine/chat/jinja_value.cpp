#include "engine/chat/jinja_value.h"

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
  v.string_ = std::move(s);
  return v;
}
Value Value::list(ValueList items) {
  Value v;
  v.kind_ = Kind::List;
  v.list_ = std::make_shared<ValueList>(std::move(items));
  return v;
}
Value Value::dict(ValueDict items) {
  Value v;
  v.kind_ = Kind::Dict;
  v.dict_ = std::make_shared<ValueDict>(std::move(items));
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
  v.string_ = std::move(name);
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

Value Value::get(std::string_view key) const {
  if (kind_ != Kind::Dict) return Value();
  for (const auto& [k, v] : *dict_) {
    if (k == key) return v;
  }
  return Value();
}

void Value::set(std::string_view key, Value value) const {
  for (auto& [k, v] : *dict_) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  dict_->emplace_back(std::string(key), std::move(value));
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::Undefined:
    case Kind::None: return false;
    case Kind::Bool: return bool_;
    case Kind::Int: return int_ != 0;
    case Kind::Float: return float_ != 0;
    case Kind::String: return !string_.empty();
    case Kind::List: return !list_->empty();
    case Kind::Dict: return !dict_->empty();
    default: return true;
  }
}

std::string Value::to_output() const {
  switch (kind_) {
    case Kind::Undefined: return "";
    case Kind::String: return string_;
    default: return to_repr();
  }
}

std::string Value::to_repr() const {
  switch (kind_) {
    case Kind::Undefined: return "";
    case Kind::None: return "None";
    case Kind::Bool: return bool_ ? "True" : "False";
    case Kind::Int: return std::to_string(int_);
    case Kind::Float: return float_repr(float_);
    case Kind::String: return string_repr(string_);
    case Kind::List: {
      std::string out = "[";
      for (size_t i = 0; i < list_->size(); ++i) out += (i ? ", " : "") + (*list_)[i].to_repr();
      return out + "]";
    }
    case Kind::Dict: {
      std::string out = "{";
      for (size_t i = 0; i < dict_->size(); ++i) {
        out += (i ? ", " : "") + string_repr((*dict_)[i].first) + ": " + (*dict_)[i].second.to_repr();
      }
      return out + "}";
    }
    case Kind::Macro: return "<macro>";
    case Kind::Function: return "<function " + string_ + ">";
  }
  return "";
}

std::string Value::to_json(int indent, int depth) const {
  switch (kind_) {
    case Kind::Undefined:
    case Kind::None: return "null";
    case Kind::Bool: return bool_ ? "true" : "false";
    case Kind::Int: return std::to_string(int_);
    case Kind::Float: return float_repr(float_);
    case Kind::String: return json_string(string_);
    case Kind::List:
    case Kind::Dict: {
      const bool is_dict_value = kind_ == Kind::Dict;
      const size_t n = is_dict_value ? dict_->size() : list_->size();
      const char* open = is_dict_value ? "{" : "[";
      const char* close = is_dict_value ? "}" : "]";
      if (n == 0) return std::string(open) + close;
      std::string out = open;
      for (size_t i = 0; i < n; ++i) {
        if (i) out += indent < 0 ? ", " : ",";
        if (indent >= 0) out += json_newline(indent, depth + 1);
        if (is_dict_value) {
          out += json_string((*dict_)[i].first) + ": " + (*dict_)[i].second.to_json(indent, depth + 1);
        } else {
          out += (*list_)[i].to_json(indent, depth + 1);
        }
      }
      if (indent >= 0) out += json_newline(indent, depth);
      return out + close;
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

bool operator==(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.kind_ == Value::Kind::Float || b.kind_ == Value::Kind::Float) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind_ != b.kind_) return false;
  switch (a.kind_) {
    case Value::Kind::Undefined:
    case Value::Kind::None: return true;
    case Value::Kind::String: return a.string_ == b.string_;
    case Value::Kind::List: return *a.list_ == *b.list_;
    case Value::Kind::Dict: return *a.dict_ == *b.dict_;
    case Value::Kind::Macro: return a.macro_ == b.macro_;
    case Value::Kind::Function: return a.string_ == b.string_;
    default: return false;
  }
}

int compare_values(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    const double x = a.as_double(), y = b.as_double();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (a.is_string() && b.is_string()) {
    const int c = a.as_string().compare(b.as_string());
    return (c > 0) - (c < 0);
  }
  throw JinjaError("cannot compare " + a.type_name() + " with " + b.type_name());
}

}  // namespace inferscope::jinja
