#include "engine/chat/jinja_builtins.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "engine/chat/jinja_text.h"

namespace inferscope::jinja {

namespace {

// Python's str.strip/lstrip/rstrip: removes characters (not bytes) that are whitespace, or that
// occur in `chars` when it is a string.
std::string strip_chars(const std::string& s, const Value& chars, bool left, bool right, Budget& budget) {
  const bool whitespace = !chars.is_string();
  const std::string_view set = whitespace ? std::string_view() : std::string_view(chars.as_string());
  budget.work(s.size() * (set.size() + 1));  // every character may be looked up in the set
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

std::string to_upper(const std::string& text) {
  std::string s = text;
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string to_lower(const std::string& text) {
  std::string s = text;
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

// A string filter or method that maps one string to another of the same length.
Value mapped_string(const std::string& s, std::string (*map)(const std::string&), Budget& budget) {
  return Value::string(budget.built(map(s)));
}

std::string replace_all(const std::string& s, const std::string& from, const std::string& to, Budget& budget) {
  if (from.empty()) return s;
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t hit = find_text(s, from, pos, budget);
    if (hit == std::string::npos) break;
    budget.fits_string(out.size() + (hit - pos) + to.size());
    out.append(s, pos, hit - pos);
    out += to;
    pos = hit + from.size();
  }
  out.append(s, pos);
  return budget.built(std::move(out));
}

void add_part(ValueList& parts, std::string part, Budget& budget) {
  budget.step();
  parts.push_back(Value::string(std::move(part)));
}

Value split(const std::string& s, const Value& separator, Budget& budget) {
  ValueList parts;
  budget.work(s.size());
  if (separator.is_string() && !separator.as_string().empty()) {
    const std::string& sep = separator.as_string();
    size_t pos = 0;
    while (true) {
      const size_t hit = find_text(s, sep, pos, budget);
      add_part(parts, s.substr(pos, hit == std::string::npos ? std::string::npos : hit - pos), budget);
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
        add_part(parts, s.substr(begin, pos - begin), budget);
        begin = std::string::npos;
      } else if (!space && begin == std::string::npos) {
        begin = pos;
      }
      pos += len;
    }
    if (begin != std::string::npos) add_part(parts, s.substr(begin), budget);
  }
  return Value::list(std::move(parts));
}

// Python's str.startswith / endswith: the argument may be a string or a tuple (list) of them.
bool affix_matches(const std::string& s, const Value& affix, bool at_start, Budget& budget) {
  auto matches = [&](const Value& a) {
    if (!a.is_string()) throw JinjaError("startswith/endswith take a string");
    const std::string& x = a.as_string();
    if (x.size() > s.size()) return false;
    budget.work(x.size());
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

const std::string& require_string(const Value& v, std::string_view what) {
  if (!v.is_string()) throw JinjaError(std::string(what) + " expects a string, got " + v.type_name());
  return v.as_string();
}

// The characters of `s` as strings, one step each.
ValueList string_chars(const std::string& s, Budget& budget) {
  const std::vector<size_t> offsets = char_offsets(s, budget);
  budget.step(static_cast<int64_t>(offsets.size() - 1));
  ValueList chars;
  chars.reserve(offsets.size() - 1);
  for (size_t i = 0; i + 1 < offsets.size(); ++i) chars.push_back(Value::string(s.substr(offsets[i], offsets[i + 1] - offsets[i])));
  return chars;
}

// Lists, dict keys and string characters as a list, for filters that iterate; a step per element.
ValueList as_sequence(const Value& v, std::string_view what, Budget& budget) {
  if (v.is_list()) {
    budget.step(static_cast<int64_t>(v.items().size()));
    return v.items();
  }
  if (v.is_dict()) {
    budget.step(static_cast<int64_t>(v.entries().size()));
    ValueList keys;
    for (const DictEntry& e : v.entries()) keys.push_back(e.key);
    return keys;
  }
  if (v.is_string()) return string_chars(v.as_string(), budget);
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
Value select_items(const Value& input, const CallArgs& args, bool by_attribute, bool keep_passing, Budget& budget) {
  size_t next_arg = 0;
  std::string attribute;
  if (by_attribute) attribute = require_string(args.get(next_arg++, "attribute"), "selectattr");
  const Value test = args.get(next_arg++, "");
  const CallArgs test_args = shifted(args, next_arg);
  ValueList out;
  for (const Value& item : as_sequence(input, "select", budget)) {
    const Value subject = by_attribute ? item.get(attribute) : item;
    const bool passes = test.is_undefined() ? subject.truthy() : apply_test(require_string(test, "select"), subject, test_args, budget);
    if (passes == keep_passing) out.push_back(item);
  }
  return Value::list(std::move(out));
}

Value join(const Value& input, const CallArgs& args, Budget& budget) {
  const Value separator = args.get(0, "d");
  const Value attribute = args.get(1, "attribute");
  const std::string sep = separator.is_undefined() ? "" : require_string(separator, "join");
  std::string out;
  bool first = true;
  for (const Value& item : as_sequence(input, "join", budget)) {
    const std::string text = (attribute.is_string() ? item.get(attribute.as_string()) : item).to_output(budget);
    budget.fits_string(out.size() + (first ? 0 : sep.size()) + text.size());
    if (!first) out += sep;
    first = false;
    out += text;
  }
  return Value::string(budget.built(std::move(out)));
}

Value to_int(const Value& v, const Value& fallback, Budget& budget) {
  if (v.is_number()) return Value::integer(v.as_int());
  if (v.is_string()) {
    char* end = nullptr;
    const std::string s = strip_chars(v.as_string(), Value(), true, true, budget);
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size()) return Value::integer(Value::number(d).as_int());
  }
  return fallback.is_undefined() ? Value::integer(0) : fallback;
}

Value to_float(const Value& v, Budget& budget) {
  if (v.is_number()) return Value::number(v.as_double());
  if (v.is_string()) {
    char* end = nullptr;
    const std::string s = strip_chars(v.as_string(), Value(), true, true, budget);
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size()) return Value::number(d);
  }
  return Value::number(0.0);
}

Value items_of(const Value& v, Budget& budget) {
  if (v.is_undefined()) return Value::list();
  if (!v.is_dict()) throw JinjaError("items() needs a dict, got " + v.type_name());
  budget.step(3 * static_cast<int64_t>(v.entries().size()));  // a pair per entry, and the list of pairs
  ValueList pairs;
  for (const DictEntry& e : v.entries()) pairs.push_back(Value::list({e.key, e.value}));
  return Value::list(std::move(pairs));
}

Value values_of(const Value& v, Budget& budget) {
  budget.step(static_cast<int64_t>(v.entries().size()));
  ValueList values;
  for (const DictEntry& e : v.entries()) values.push_back(e.value);
  return Value::list(std::move(values));
}

Value first_or_last(const Value& input, bool first, Budget& budget) {
  if (input.is_list()) {
    const ValueList& items = input.items();
    if (items.empty()) return Value();
    return first ? items.front() : items.back();
  }
  ValueList items = as_sequence(input, first ? "first" : "last", budget);
  if (items.empty()) return Value();
  return first ? items.front() : items.back();
}

// Jinja's dictsort: the (key, value) pairs ordered by key (by value with by="value"), strings
// case-insensitively unless case_sensitive, reversed with reverse=true.
Value dict_sorted(const Value& input, const CallArgs& args, Budget& budget) {
  if (!input.is_dict()) throw JinjaError("dictsort needs a dict, got " + input.type_name());
  const bool case_sensitive = args.get(0, "case_sensitive").truthy();
  const Value by = args.get(1, "by");
  const bool by_value = by.is_string() && by.as_string() == "value";
  if (by.is_string() && !by_value && by.as_string() != "key") throw JinjaError("dictsort: by must be 'key' or 'value'");
  const bool reverse = args.get(2, "reverse").truthy();
  const ValueList pairs = items_of(input, budget).items();
  auto sort_key = [&](const Value& pair) {
    const Value& v = pair.items()[by_value ? 1 : 0];
    return v.is_string() && !case_sensitive ? mapped_string(v.as_string(), to_lower, budget) : v;
  };
  ValueList sorted = pairs;
  budget.step(static_cast<int64_t>(sorted.size()) * 8);
  std::stable_sort(sorted.begin(), sorted.end(), [&](const Value& a, const Value& b) {
    const int c = compare_values(sort_key(a), sort_key(b), budget);
    return reverse ? c > 0 : c < 0;
  });
  return Value::list(std::move(sorted));
}

// Jinja's min / max filters: the smallest (largest) item by the comparison operators use, the
// first of equals; undefined for an empty sequence.
Value extreme(const Value& input, bool smallest, Budget& budget) {
  ValueList items = as_sequence(input, smallest ? "min" : "max", budget);
  if (items.empty()) return Value();
  size_t best = 0;
  for (size_t i = 1; i < items.size(); ++i) {
    const int c = compare_values(items[i], items[best], budget);
    if (smallest ? c < 0 : c > 0) best = i;
  }
  return items[best];
}

Value reversed(const Value& input, Budget& budget) {
  ValueList items = as_sequence(input, "reverse", budget);
  ValueList out(items.rbegin(), items.rend());
  if (!input.is_string()) return Value::list(std::move(out));
  std::string s;
  for (const Value& c : out) s += c.as_string();
  return Value::string(budget.built(std::move(s)));
}

Value map_items(const Value& input, const CallArgs& args, Budget& budget) {
  const Value attribute = args.named("attribute");
  ValueList out;
  if (attribute.is_string()) {
    const Value fallback = args.named("default");
    for (const Value& item : as_sequence(input, "map", budget)) {
      Value v = item.get(attribute.as_string());
      out.push_back(v.is_undefined() ? fallback : v);
    }
  } else {
    const std::string& filter = require_string(args.get(0, ""), "map");
    const CallArgs rest = shifted(args, 1);
    for (const Value& item : as_sequence(input, "map", budget)) out.push_back(apply_filter(filter, item, rest, budget));
  }
  return Value::list(std::move(out));
}

Value length_of(const Value& input, Budget& budget) {
  if (input.is_string()) {
    budget.work(input.as_string().size());
    return Value::integer(static_cast<int64_t>(utf8_length(input.as_string())));
  }
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

// Python's str.format with positional fields: "{}" takes the next argument, "{N}" argument N,
// "{{" and "}}" are braces (Hunyuan 3's special tokens); named fields and format specs are
// refused.
Value formatted(const std::string& s, const CallArgs& args, Budget& budget) {
  std::string out;
  size_t next_arg = 0;
  bool automatic = false, manual = false;  // Python refuses to mix "{}" with "{N}"
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if ((c == '{' || c == '}') && i + 1 < s.size() && s[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    if (c != '{') {
      if (c == '}') throw JinjaError("format(): a single '}' in the format string");
      out += c;
      continue;
    }
    const size_t close = s.find('}', i);
    if (close == std::string::npos) throw JinjaError("format(): an unclosed '{' in the format string");
    const std::string field = s.substr(i + 1, close - i - 1);
    (field.empty() ? automatic : manual) = true;
    if (automatic && manual) throw JinjaError("format(): cannot switch between automatic and manual field numbering");
    size_t index = next_arg++;
    if (!field.empty()) {
      if (field.find_first_not_of("0123456789") != std::string::npos || field.size() > 6) {
        throw JinjaError("format(): only positional fields ({} or {N}) are supported, not {" + field + "}");
      }
      index = std::stoul(field);
    }
    if (index >= args.positional.size()) throw JinjaError("format(): no argument " + std::to_string(index));
    out += args.positional[index].to_output(budget);
    i = close;
  }
  return Value::string(budget.built(std::move(out)));
}

Value replaced(const std::string& s, const CallArgs& args, Budget& budget) {
  return Value::string(replace_all(s, require_string(args.get(0, "old"), "replace"),
                                   require_string(args.get(1, "new"), "replace"), budget));
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

Value apply_filter(std::string_view name, const Value& input, const CallArgs& args, Budget& budget) {
  if (name == "trim") return Value::string(strip_chars(require_string(input, "trim"), args.get(0, "chars"), true, true, budget));
  if (name == "length" || name == "count") return length_of(input, budget);
  if (name == "upper") return mapped_string(require_string(input, "upper"), to_upper, budget);
  if (name == "lower") return mapped_string(require_string(input, "lower"), to_lower, budget);
  if (name == "capitalize") return mapped_string(require_string(input, "capitalize"), capitalize, budget);
  if (name == "title") return mapped_string(require_string(input, "title"), title, budget);
  if (name == "default" || name == "d") {
    const bool use_for_falsy = args.get(1, "boolean").truthy();
    const bool replace = input.is_undefined() || (use_for_falsy && !input.truthy());
    if (!replace) return input;
    const Value fallback = args.get(0, "default_value");
    return fallback.is_undefined() ? Value::string("") : fallback;
  }
  if (name == "tojson") return Value::string(input.to_json(json_indent(args), budget));
  if (name == "join") return join(input, args, budget);
  if (name == "replace") return replaced(require_string(input, "replace"), args, budget);
  if (name == "dictsort") return dict_sorted(input, args, budget);
  if (name == "min") return extreme(input, true, budget);
  if (name == "max") return extreme(input, false, budget);
  if (name == "first") return first_or_last(input, true, budget);
  if (name == "last") return first_or_last(input, false, budget);
  if (name == "string") return input.is_string() ? input : Value::string(input.to_output(budget));
  if (name == "int") return to_int(input, args.get(0, "default"), budget);
  if (name == "float") return to_float(input, budget);
  if (name == "items") return items_of(input, budget);
  if (name == "list") return Value::list(as_sequence(input, "list", budget));
  if (name == "reverse") return reversed(input, budget);
  if (name == "selectattr") return select_items(input, args, true, true, budget);
  if (name == "rejectattr") return select_items(input, args, true, false, budget);
  if (name == "select") return select_items(input, args, false, true, budget);
  if (name == "reject") return select_items(input, args, false, false, budget);
  if (name == "map") return map_items(input, args, budget);
  if (name == "safe") return input;
  throw JinjaError("unknown filter '" + std::string(name) + "'");
}

bool apply_test(std::string_view name, const Value& input, const CallArgs& args, Budget& budget) {
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
    if (d == -1) return true;  // INT64_MIN % -1 overflows
    return input.as_int() % d == 0;
  }
  if (name == "equalto" || name == "eq" || name == "sameas") return Value::equal(input, args.get(0, "other"), budget);
  if (name == "ne") return !Value::equal(input, args.get(0, "other"), budget);
  throw JinjaError("unknown test '" + std::string(name) + "'");
}

Value call_method(const Value& object, std::string_view name, const CallArgs& args, Budget& budget) {
  if (object.is_string()) {
    const std::string& s = object.as_string();
    if (name == "strip") return Value::string(strip_chars(s, args.get(0, "chars"), true, true, budget));
    if (name == "lstrip") return Value::string(strip_chars(s, args.get(0, "chars"), true, false, budget));
    if (name == "rstrip") return Value::string(strip_chars(s, args.get(0, "chars"), false, true, budget));
    if (name == "startswith") return Value::boolean(affix_matches(s, args.get(0, "prefix"), true, budget));
    if (name == "endswith") return Value::boolean(affix_matches(s, args.get(0, "suffix"), false, budget));
    if (name == "split") return split(s, args.get(0, "sep"), budget);
    if (name == "upper") return mapped_string(s, to_upper, budget);
    if (name == "lower") return mapped_string(s, to_lower, budget);
    if (name == "title") return mapped_string(s, title, budget);
    if (name == "capitalize") return mapped_string(s, capitalize, budget);
    if (name == "replace") return replaced(s, args, budget);
    if (name == "format") return formatted(s, args, budget);
  } else if (object.is_dict()) {
    if (name == "items") return items_of(object, budget);
    if (name == "keys") return Value::list(as_sequence(object, "keys", budget));
    if (name == "values") return values_of(object, budget);
    if (name == "get") {
      const Value v = object.get(require_string(args.get(0, "key"), "get"));
      return v.is_undefined() ? (args.positional.size() > 1 ? args.positional[1] : Value::none()) : v;
    }
  }
  throw JinjaError("unknown method '" + std::string(name) + "' of a " + object.type_name());
}

}  // namespace inferscope::jinja
