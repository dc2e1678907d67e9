// One GGUF metadata value: a scalar, a string, or an array of either (no nested arrays).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace inferscope::gguf {

enum class ValueType : uint32_t {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6, BOOL = 7,
  STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};

const char* value_type_name(ValueType type);

struct Value {
  ValueType type = ValueType::UINT8;
  ValueType array_type = ValueType::UINT8;  // element type when type == ARRAY

  // Scalars: integers/bools widened into `integer` (signed types sign-extended, UINT64 kept
  // bit-for-bit), floats into `real`, strings into `string`.
  int64_t integer = 0;
  double real = 0;
  std::string string;

  // Arrays: numeric elements widened the same way; string elements in `strings`.
  std::vector<int64_t> integers;
  std::vector<double> reals;
  std::vector<std::string> strings;

  bool is_integer_type() const;  // scalar integer (any width), not bool
  bool is_float_type() const;
  size_t array_size() const;
  std::string to_display_string(size_t max_items = 8) const;  // for `inspect`
};

bool is_integer(ValueType t);
bool is_float(ValueType t);

}  // namespace inferscope::gguf
