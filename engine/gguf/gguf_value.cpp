#include "engine/gguf/gguf_value.h"

#include <cstdio>

namespace inferscope::gguf {

const char* value_type_name(ValueType type) {
  switch (type) {
    case ValueType::UINT8: return "UINT8";
    case ValueType::INT8: return "INT8";
    case ValueType::UINT16: return "UINT16";
    case ValueType::INT16: return "INT16";
    case ValueType::UINT32: return "UINT32";
    case ValueType::INT32: return "INT32";
    case ValueType::FLOAT32: return "FLOAT32";
    case ValueType::BOOL: return "BOOL";
    case ValueType::STRING: return "STRING";
    case ValueType::ARRAY: return "ARRAY";
    case ValueType::UINT64: return "UINT64";
    case ValueType::INT64: return "INT64";
    case ValueType::FLOAT64: return "FLOAT64";
  }
  return "?";
}

bool is_integer(ValueType t) {
  switch (t) {
    case ValueType::UINT8: case ValueType::INT8: case ValueType::UINT16: case ValueType::INT16:
    case ValueType::UINT32: case ValueType::INT32: case ValueType::UINT64: case ValueType::INT64:
      return true;
    default:
      return false;
  }
}

bool is_float(ValueType t) { return t == ValueType::FLOAT32 || t == ValueType::FLOAT64; }

bool Value::is_integer_type() const { return is_integer(type); }
bool Value::is_float_type() const { return is_float(type); }

size_t Value::array_size() const {
  if (type != ValueType::ARRAY) return 0;
  if (array_type == ValueType::STRING) return strings.size();
  if (is_float(array_type)) return reals.size();
  return integers.size();
}

namespace {

std::string scalar_text(ValueType t, int64_t integer, double real, const std::string& s) {
  char buf[64];
  if (t == ValueType::STRING) {
    std::string quoted(1, '\'');
    quoted.append(s);
    quoted.push_back('\'');
    return quoted;
  }
  if (t == ValueType::BOOL) return integer ? "true" : "false";
  if (is_float(t)) {
    std::snprintf(buf, sizeof buf, "%.9g", real);
    return buf;
  }
  if (t == ValueType::UINT64) return std::to_string(static_cast<uint64_t>(integer));
  return std::to_string(integer);
}

}  // namespace

std::string Value::to_display_string(size_t max_items) const {
  if (type != ValueType::ARRAY) return scalar_text(type, integer, real, string);
  std::string out = "[" + std::string(value_type_name(array_type)) + " x " + std::to_string(array_size());
  size_t n = array_size();
  if (n == 0 || max_items == 0) return out + "]";
  out += ": ";
  for (size_t i = 0; i < n && i < max_items; ++i) {
    if (i) out += ", ";
    if (array_type == ValueType::STRING) out += scalar_text(array_type, 0, 0, strings[i]);
    else if (is_float(array_type)) out += scalar_text(array_type, 0, reals[i], "");
    else out += scalar_text(array_type, integers[i], 0, "");
  }
  if (n > max_items) out += ", ...";
  return out + "]";
}

}  // namespace inferscope::gguf
