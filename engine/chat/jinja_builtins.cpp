#include "engine/chat/jinja_builtins.h"

#include <cctype>
#include <cstdlib>

namespace inferscope::jinja {

namespace {

// Byte length of the UTF-8 character starting at s[pos] (a lead byte plus its continuation bytes).
size_t char_length_at(std::string_view s, size_t pos) {
  size_t len = 1;
  while (pos + len < s.size() && (static_cast<unsigned char>(s[pos + len]) & 0xC0) == 0x80) ++len;
  return len;
}

// Start of the UTF-8 character that ends at s[end - 1].
size_t char_start_before(std::string_view s, size_t end) {
  size_t pos = end - 1;
  while (pos > 0 && (static_cast<unsigned char>(s[pos]) & 0xC0) == 0x80) --pos;
  return pos;
}

// Python's str.isspace() for one UTF-8 character: the ASCII whitespace plus \x1c-\x1f, NEL,
// NBSP, U+1680, U+2000-U+200A, U+2028/9, U+202F, U+205F and U+3000 (ideographic space).
// Templates are written for Python's Jinja, whose trim/strip/split use this set.
bool is_python_space(std::string_view ch) {
  if (ch.size() == 1) {
    const unsigned char c = static_cast<unsigned char>(ch[0]);
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20);
  }
  if (ch == "\xC2\x85" || ch == "\xC2\xA0" || ch == "\xE1\x9A\x80" || ch == "\xE3\x80\x80") return true;
  if (ch.size() == 3 && ch[0] == '\xE2') {
    const unsigned char b1 = static_cast<unsigned char>(ch[1]), b2 = static_cast<unsigned char>(ch[2]);
    if (b1 == 0x80) return b2 <= 0x8A || b2 == 0xA8 || b2 == 0xA9 || b2 == 0xAF;  // U+2000-200A, 2028, 2029, 202F
    if (b1 == 0x81) return b2 == 0x9F;                                             // U+205F
  }
  return false;
}

// Python's str.strip/lstrip/rstrip: removes characters (not bytes) that are whitespace, or that
// occur in `chars` when it is a string.
std::string strip_chars(const std::string& s, const Value& chars, bool left, bool right) {
  const bool whitespace = !chars.is_string();
  const std::string_view set = whitespace ? std::string_view() : std::string_view(chars.as_string());
  const auto strippable = [&](std::string_view ch) {
    if (whitespace) return is_python_space(ch);
    for (size_t pos = 0; pos < set.size();) {
      const size_t len = char_length_at(set, pos);
      if (set.substr(pos, len) == ch) return true;
      pos += len;
    }
    return false;
  };
  const std::string_view view(s);
  size_t begin = 0, end = s.size();
  if (left) {
    while (begin < end) {
      const size_t len = char_length_at(view, begin);
      if (!strippable(view.substr(begin, len))) break;
      begin += len;
    }
  }
  if (right) {
    while (end > begin) {
      const size_t start = char_start_before(view, end);
      if (start < begin || !strippable(view.substr(start, end - start))) break;
      end = start;
    }
  }
  return s.substr(begin, end - begin);
}

std::string to_upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string to_lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string capitalize(const std::string& s) {
  std::string out = to_lower(s);
  if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

// Python's str.title(): a letter after a non-letter is upper case, every other letter lower.
std::string title(const std::string& s) {
  std::string out = s;
  bool previous_is_letter = false;
  for (char& c : out) {
    const bool letter = std::isalpha(static_cast<unsigned char>(c)) != 0;
    if (letter) c = static_cast<char>(previous_is_letter ? std::tolower(static_cast<unsigned char>(c)) : std::toupper(static_cast<unsigned char>(c)));
    previous_is_letter = letter;
  }
  return out;
}

std::string replace_all(const std::string& s, const std::string& from, const std::string& to, size_t max_string) {
  if (from.empty()) return s;
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t hit = s.find(from, pos);
    if (hit == std::string::npos) break;
    out.append(s, pos, hit - pos);
    out += to;
    if (out.size() > max_string) checked_string(std::move(out), max_string);
    pos = hit + from.size();
  }
  out.append(s, pos);
  return checked_string(std::move(out), max_string);
}

Value split(const std::string& s, const Value& separator) {
  ValueList parts;
  if (separator.is_string() && !separator.as_string().empty()) {
    const std::string& sep = separator.as_string();
    size_t pos = 0;
    while (true) {
      const size_t hit = s.find(sep, pos);
      parts.push_back(Value::string(s.substr(pos, hit == std::string::npos ? std::string::npos : hit - pos)));
      if (hit == std::string::npos) break;
      pos = hit + sep.size();
    }
  } else {
    // Runs of non-whitespace characters (Python's str.isspace set).
    const std::string_view view(s);
    size_t begin = std::string::npos;
    for (size_t pos = 0; pos < view.size();) {
      const size_t len = char_length_at(view, pos);
      const bool space = is_python_space(view.substr(pos, len));
      if (space && begin != std::string::npos) {
        parts.push_back(Value::string(s.substr(begin, pos - begin)));
        begin = std::string::npos;
      } else if (!space && begin == std::string::npos) {
        begin = pos;
      }
      pos += len;
    }
    if (begin != std::string::npos) parts.push_back(Value::string(s.substr(begin)));
  }
  return Value::list(std::move(parts));
}

// Python's str.startswith / endswith: the argument may be a string or a tuple (list) of them.
bool affix_matches(const std::string& s, const Value& affix, bool at_start) {
  auto matches = [&](const Value& a) {
    if (!a.is_string()) throw JinjaError("startswith/endswith take a string");
    const std::string& x = a.as_string();
    if (x.size() > s.size()) return false;
    return at_start ? s.compare(0, x.size(), x) == 0 : s.compare(s.size() - x.size(), x.size(), x) == 0;
  };
  if (affix.is_list()) {
    for (const Value& a : affix.items()) {
      if (matches(a)) return true;
    }
    return false;
  }
  return matches(affix);
}

size_t utf8_length(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

const std::string& require_string(const Value& v, std::string_view what) {
  if (!v.is_string()) throw JinjaError(std::string(what) + " expects a string, got " + v.type_name());
  return v.as_string();
}

// Lists, dict keys and string characters as a list, for filters that iterate.
ValueList as_sequence(const Value& v, std::string_view what) {
  if (v.is_list()) return v.items();
  if (v.is_dict()) {
    ValueList keys;
    for (const auto& [k, _] : v.entries()) keys.push_back(Value::string(k));
    return keys;
  }
  if (v.is_string()) {
    ValueList chars;
    const std::string& s = v.as_string();
    for (size_t i = 0; i < s.size();) {
      size_t len = 1;
      while (i + len < s.size() && (static_cast<unsigned char>(s[i + len]) & 0xC0) == 0x80) ++len;
      chars.push_back(Value::string(s.substr(i, len)));
      i += len;
    }
    return chars;
  }
  if (v.is_undefined() || v.is_none()) return {};
  throw JinjaError(std::string(what) + " expects a sequence, got " + v.type_name());
}

CallArgs shifted(const CallArgs& args, size_t n) {
  CallArgs rest;
  if (args.positional.size() > n) rest.positional.assign(args.positional.begin() + static_cast<long>(n), args.positional.end());
  rest.keyword = args.keyword;
  return rest;
}

// selectattr / rejectattr / select / reject: keep items whose (attribute) passes the test.
Value select_items(const Value& input, const CallArgs& args, bool by_attribute, bool keep_passing) {
  size_t next_arg = 0;
  std::string attribute;
  if (by_attribute) attribute = require_string(args.get(next_arg++, "attribute"), "selectattr");
  const Value test = args.get(next_arg++, "");
  const CallArgs test_args = shifted(args, next_arg);
  ValueList out;
  for (const Value& item : as_sequence(input, "select")) {
    const Value subject = by_attribute ? item.get(attribute) : item;
    const bool passes = test.is_undefined() ? subject.truthy() : apply_test(require_string(test, "select"), subject, test_args);
    if (passes == keep_passing) out.push_back(item);
  }
  return Value::list(std::move(out));
}

Value join(const Value& input, const CallArgs& args, size_t max_string) {
  const Value separator = args.get(0, "d");
  const Value attribute = args.get(1, "attribute");
  const std::string sep = separator.is_undefined() ? "" : require_string(separator, "join");
  std::string out;
  bool first = true;
  for (const Value& item : as_sequence(input, "join")) {
    if (!first) out += sep;
    first = false;
    out += (attribute.is_string() ? item.get(attribute.as_string()) : item).to_output();
    if (out.size() > max_string) checked_string(std::move(out), max_string);
  }
  return Value::string(std::move(out));
}

Value to_int(const Value& v, const Value& fallback) {
  if (v.is_number()) return Value::integer(v.as_int());
  if (v.is_string()) {
    char* end = nullptr;
    const std::string s = strip_chars(v.as_string(), Value(), true, true);
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size()) return Value::integer(Value::number(d).as_int());
  }
  return fallback.is_undefined() ? Value::integer(0) : fallback;
}

Value to_float(const Value& v) {
  if (v.is_number()) return Value::number(v.as_double());
  if (v.is_string()) {
    char* end = nullptr;
    const std::string s = strip_chars(v.as_string(), Value(), true, true);
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size()) return Value::number(d);
  }
  return Value::number(0.0);
}

Value items_of(const Value& v) {
  if (v.is_undefined()) return Value::list();
  if (!v.is_dict()) throw JinjaError("items() needs a dict, got " + v.type_name());
  ValueList pairs;
  for (const auto& [k, val] : v.entries()) pairs.push_back(Value::list({Value::string(k), val}));
  return Value::list(std::move(pairs));
}

Value first_or_last(const Value& input, bool first) {
  ValueList items = as_sequence(input, first ? "first" : "last");
  if (items.empty()) return Value();
  return first ? items.front() : items.back();
}

Value reversed(const Value& input) {
  ValueList items = as_sequence(input, "reverse");
  ValueList out(items.rbegin(), items.rend());
  if (!input.is_string()) return Value::list(std::move(out));
  std::string s;
  for (const Value& c : out) s += c.as_string();
  return Value::string(std::move(s));
}

Value map_items(const Value& input, const CallArgs& args, size_t max_string) {
  const Value attribute = args.named("attribute");
  ValueList out;
  if (attribute.is_string()) {
    const Value fallback = args.named("default");
    for (const Value& item : as_sequence(input, "map")) {
      Value v = item.get(attribute.as_string());
      out.push_back(v.is_undefined() ? fallback : v);
    }
  } else {
    const std::string& filter = require_string(args.get(0, ""), "map");
    const CallArgs rest = shifted(args, 1);
    for (const Value& item : as_sequence(input, "map")) out.push_back(apply_filter(filter, item, rest, max_string));
  }
  return Value::list(std::move(out));
}

Value length_of(const Value& input) {
  if (input.is_string()) return Value::integer(static_cast<int64_t>(utf8_length(input.as_string())));
  if (input.is_list()) return Value::integer(static_cast<int64_t>(input.items().size()));
  if (input.is_dict()) return Value::integer(static_cast<int64_t>(input.entries().size()));
  if (input.is_undefined()) return Value::integer(0);
  throw JinjaError("length of a " + input.type_name());
}

int json_indent(const CallArgs& args) {
  const Value indent = args.get(0, "indent");
  if (indent.is_undefined() || indent.is_none()) return -1;
  const int64_t n = indent.as_int();
  if (n < 0 || n > 16) throw JinjaError("tojson indent must be 0..16");
  return static_cast<int>(n);
}

}  // namespace

Value CallArgs::get(size_t index, std::string_view name) const {
  if (index < positional.size()) return positional[index];
  return named(name);
}

Value CallArgs::named(std::string_view name) const {
  for (const auto& [k, v] : keyword) {
    if (!name.empty() && k == name) return v;
  }
  return Value();
}

std::string checked_string(std::string s, size_t max_string) {
  if (s.size() > max_string) throw JinjaError("template output exceeds " + std::to_string(max_string) + " bytes");
  return s;
}

Value apply_filter(std::string_view name, const Value& input, const CallArgs& args, size_t max_string) {
  if (name == "trim") return Value::string(strip_chars(require_string(input, "trim"), args.get(0, "chars"), true, true));
  if (name == "length" || name == "count") return length_of(input);
  if (name == "upper") return Value::string(to_upper(require_string(input, "upper")));
  if (name == "lower") return Value::string(to_lower(require_string(input, "lower")));
  if (name == "capitalize") return Value::string(capitalize(require_string(input, "capitalize")));
  if (name == "title") return Value::string(title(require_string(input, "title")));
  if (name == "default" || name == "d") {
    const bool use_for_falsy = args.get(1, "boolean").truthy();
    const bool replace = input.is_undefined() || (use_for_falsy && !input.truthy());
    if (!replace) return input;
    const Value fallback = args.get(0, "default_value");
    return fallback.is_undefined() ? Value::string("") : fallback;
  }
  if (name == "tojson") return Value::string(checked_string(input.to_json(json_indent(args)), max_string));
  if (name == "join") return join(input, args, max_string);
  if (name == "replace") {
    return Value::string(replace_all(require_string(input, "replace"), require_string(args.get(0, "old"), "replace"),
                                     require_string(args.get(1, "new"), "replace"), max_string));
  }
  if (name == "first") return first_or_last(input, true);
  if (name == "last") return first_or_last(input, false);
  if (name == "string") return Value::string(input.to_output());
  if (name == "int") return to_int(input, args.get(0, "default"));
  if (name == "float") return to_float(input);
  if (name == "items") return items_of(input);
  if (name == "list") return Value::list(as_sequence(input, "list"));
  if (name == "reverse") return reversed(input);
  if (name == "selectattr") return select_items(input, args, true, true);
  if (name == "rejectattr") return select_items(input, args, true, false);
  if (name == "select") return select_items(input, args, false, true);
  if (name == "reject") return select_items(input, args, false, false);
  if (name == "map") return map_items(input, args, max_string);
  if (name == "safe") return input;
  throw JinjaError("unknown filter '" + std::string(name) + "'");
}

bool apply_test(std::string_view name, const Value& input, const CallArgs& args) {
  using Kind = Value::Kind;
  if (name == "defined") return !input.is_undefined();
  if (name == "undefined") return input.is_undefined();
  if (name == "none") return input.is_none();
  if (name == "string") return input.is_string();
  if (name == "number") return input.kind() == Kind::Int || input.kind() == Kind::Float;
  if (name == "integer") return input.kind() == Kind::Int;
  if (name == "float") return input.kind() == Kind::Float;
  if (name == "boolean") return input.kind() == Kind::Bool;
  if (name == "true") return input.kind() == Kind::Bool && input.as_bool();
  if (name == "false") return input.kind() == Kind::Bool && !input.as_bool();
  if (name == "mapping") return input.is_dict();
  if (name == "sequence") return input.is_list() || input.is_string() || input.is_dict();
  if (name == "iterable") return input.is_list() || input.is_string() || input.is_dict();
  if (name == "callable") return input.is_callable();
  if (name == "odd") return input.as_int() % 2 != 0;
  if (name == "even") return input.as_int() % 2 == 0;
  if (name == "divisibleby") {
    const int64_t d = args.get(0, "num").as_int();
    if (d == 0) throw JinjaError("divisibleby(0)");
    return input.as_int() % d == 0;
  }
  if (name == "equalto" || name == "eq" || name == "sameas") return input == args.get(0, "other");
  if (name == "ne") return !(input == args.get(0, "other"));
  throw JinjaError("unknown test '" + std::string(name) + "'");
}

Value call_method(const Value& object, std::string_view name, const CallArgs& args, size_t max_string) {
  if (object.is_string()) {
    const std::string& s = object.as_string();
    if (name == "strip") return Value::string(strip_chars(s, args.get(0, "chars"), true, true));
    if (name == "lstrip") return Value::string(strip_chars(s, args.get(0, "chars"), true, false));
    if (name == "rstrip") return Value::string(strip_chars(s, args.get(0, "chars"), false, true));
    if (name == "startswith") return Value::boolean(affix_matches(s, args.get(0, "prefix"), true));
    if (name == "endswith") return Value::boolean(affix_matches(s, args.get(0, "suffix"), false));
    if (name == "split") return split(s, args.get(0, "sep"));
    if (name == "upper") return Value::string(to_upper(s));
    if (name == "lower") return Value::string(to_lower(s));
    if (name == "title") return Value::string(title(s));
    if (name == "capitalize") return Value::string(capitalize(s));
    if (name == "replace") {
      return Value::string(replace_all(s, require_string(args.get(0, "old"), "replace"),
                                       require_string(args.get(1, "new"), "replace"), max_string));
    }
  } else if (object.is_dict()) {
    if (name == "items") return items_of(object);
    if (name == "keys") return Value::list(as_sequence(object, "keys"));
    if (name == "values") {
      ValueList values;
      for (const auto& [_, v] : object.entries()) values.push_back(v);
      return Value::list(std::move(values));
    }
    if (name == "get") {
      const Value v = object.get(require_string(args.get(0, "key"), "get"));
      return v.is_undefined() ? (args.positional.size() > 1 ? args.positional[1] : Value::none()) : v;
    }
  }
  throw JinjaError("unknown method '" + std::string(name) + "' of a " + object.type_name());
}

}  // namespace inferscope::jinja
