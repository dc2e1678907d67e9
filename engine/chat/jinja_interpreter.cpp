#include "engine/chat/jinja_interpreter.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ctime>

#include "engine/chat/jinja_builtins.h"
#include "engine/chat/jinja_text.h"

namespace inferscope::jinja {

namespace {

constexpr std::string_view kBuiltinFunctions[] = {"range", "namespace", "raise_exception", "strftime_now"};

// Python's slice of a sequence of length n: the indices start, start + step, ... (count of them).
struct SliceRange {
  int64_t start = 0;
  int64_t step = 1;
  int64_t count = 0;
};

SliceRange slice_range(int64_t n, const Value& start, const Value& stop, const Value& step_value) {
  const int64_t step = step_value.is_undefined() || step_value.is_none() ? 1 : step_value.as_int();
  if (step == 0) throw JinjaError("slice step cannot be zero");
  auto clamp = [&](const Value& v, int64_t fallback) {
    if (v.is_undefined() || v.is_none()) return fallback;
    int64_t x = v.as_int();
    if (x < 0) x += n;
    if (step > 0) return std::min(std::max<int64_t>(x, 0), n);
    return std::min(std::max<int64_t>(x, -1), n - 1);
  };
  const int64_t lo = clamp(start, step > 0 ? 0 : n - 1);
  const int64_t hi = clamp(stop, step > 0 ? n : -1);
  SliceRange r{lo, step, 0};
  if (step > 0 && hi > lo) r.count = (hi - lo - 1) / step + 1;
  if (step < 0 && lo > hi) {
    const uint64_t magnitude = static_cast<uint64_t>(-(step + 1)) + 1;
    r.count = static_cast<int64_t>(static_cast<uint64_t>(lo - hi - 1) / magnitude + 1);
  }
  return r;
}

// start + k * step, for k below a range's or slice's length (so the result fits; the product
// alone may not, hence the wrap-around arithmetic).
int64_t nth_index(int64_t start, int64_t step, int64_t k) {
  return static_cast<int64_t>(static_cast<uint64_t>(start) + static_cast<uint64_t>(k) * static_cast<uint64_t>(step));
}

// How many values range(start, stop, step) yields; step != 0.
int64_t range_length(int64_t start, int64_t stop, int64_t step) {
  if (step > 0 && start < stop) return static_cast<int64_t>((static_cast<uint64_t>(stop) - static_cast<uint64_t>(start) - 1) / static_cast<uint64_t>(step) + 1);
  if (step < 0 && start > stop) {
    const uint64_t magnitude = static_cast<uint64_t>(-(step + 1)) + 1;
    return static_cast<int64_t>((static_cast<uint64_t>(start) - static_cast<uint64_t>(stop) - 1) / magnitude + 1);
  }
  return 0;
}

int64_t checked_arithmetic(const std::string& op, int64_t a, int64_t b) {
  int64_t r = 0;
  bool overflow = false;
  if (op == "+") overflow = __builtin_add_overflow(a, b, &r);
  if (op == "-") overflow = __builtin_sub_overflow(a, b, &r);
  if (op == "*") overflow = __builtin_mul_overflow(a, b, &r);
  if (overflow) throw JinjaError("integer overflow in '" + op + "'");
  return r;
}

Value number_op(const std::string& op, const Value& a, const Value& b) {
  const bool both_int = a.kind() != Value::Kind::Float && b.kind() != Value::Kind::Float;
  if (op == "/") {
    if (b.as_double() == 0) throw JinjaError("division by zero");
    return Value::number(a.as_double() / b.as_double());
  }
  if (op == "//" || op == "%") {
    if (b.as_double() == 0) throw JinjaError(op == "//" ? "division by zero" : "modulo by zero");
    if (both_int) {
      const int64_t x = a.as_int(), y = b.as_int();
      if (x == INT64_MIN && y == -1) throw JinjaError("integer overflow in '" + op + "'");
      int64_t q = x / y, r = x % y;
      if (r != 0 && ((r < 0) != (y < 0))) {  // Python floors toward negative infinity
        --q;
        r += y;
      }
      return Value::integer(op == "//" ? q : r);
    }
    const double x = a.as_double(), y = b.as_double();
    const double q = std::floor(x / y);
    return op == "//" ? Value::number(q) : Value::number(x - q * y);
  }
  if (op == "**") {
    if (both_int && b.as_int() >= 0) {
      const int64_t base = a.as_int(), exponent = b.as_int();
      if (base == 0 || base == 1) return Value::integer(exponent == 0 ? 1 : base);
      if (base == -1) return Value::integer(exponent % 2 == 0 ? 1 : -1);
      int64_t result = 1;  // |base| >= 2 overflows within 63 multiplications
      for (int64_t i = 0; i < exponent; ++i) result = checked_arithmetic("*", result, base);
      return Value::integer(result);
    }
    return Value::number(std::pow(a.as_double(), b.as_double()));
  }
  if (both_int) return Value::integer(checked_arithmetic(op, a.as_int(), b.as_int()));
  const double x = a.as_double(), y = b.as_double();
  return Value::number(op == "+" ? x + y : op == "-" ? x - y : x * y);
}


bool contains(const Value& container, const Value& item, Budget& budget) {
  if (container.is_string()) {
    if (!item.is_string()) throw JinjaError("'in <string>' needs a string on the left");
    return find_text(container.as_string(), item.as_string(), 0, budget) != std::string::npos;
  }
  if (container.is_list()) {
    for (const Value& v : container.items()) {
      if (Value::equal(v, item, budget)) return true;
    }
    return false;
  }
  if (container.is_dict()) {
    budget.work(container.entries().size() * sizeof(Value));
    return item.is_string() && !container.get(item.as_string()).is_undefined();
  }
  if (container.is_undefined()) return false;
  throw JinjaError("'in' needs a string, list or dict, got " + container.type_name());
}

class Interpreter {
 public:
  explicit Interpreter(const RenderOptions& options) : budget_(options) {}

  std::string run(const Template& tmpl, const Value& globals) {
    Value root = Value::dict();
    for (std::string_view name : kBuiltinFunctions) root.set(name, Value::function(std::string(name)));
    if (globals.is_dict()) {
      for (const DictEntry& e : globals.entries()) root.set(e.key.as_string(), e.value);
    }
    scopes_.push_back(root);
    std::string out;
    if (exec_body(tmpl.body, out) != Flow::Normal) throw JinjaError("break or continue outside a loop");
    return out;
  }

 private:
  enum class Flow { Normal, Break, Continue };

  void emit(std::string& out, const std::string& text) {
    budget_.fits_string(out.size() + text.size());
    budget_.work(text.size());
    out += text;
  }

  Value lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      Value v = it->get(name);
      if (!v.is_undefined()) return v;
    }
    return Value();
  }

  void assign(const std::string& name, Value value) { scopes_.back().set(name, std::move(value)); }

  // ---- statements ----

  Flow exec_body(const Body& body, std::string& out) {
    for (const auto& node : body) {
      const Flow flow = exec(*node, out);
      if (flow != Flow::Normal) return flow;
    }
    return Flow::Normal;
  }

  Flow exec(const Node& node, std::string& out) {
    const Budget::Depth nested(budget_, Budget::Depth::Evaluation);
    budget_.step();
    switch (node.kind) {
      case Node::Kind::Text: emit(out, node.text); break;
      case Node::Kind::Output: {
        const Value v = eval(*node.expr);
        if (v.is_string()) {
          emit(out, v.as_string());
        } else {
          emit(out, v.to_output(budget_));
        }
        break;
      }
      case Node::Kind::If:
        for (const auto& [condition, body] : node.branches) {
          if (eval(*condition).truthy()) return exec_body(body, out);
        }
        return exec_body(node.else_body, out);
      case Node::Kind::For: exec_for(node, out); break;
      case Node::Kind::Set: exec_set(node); break;
      case Node::Kind::Macro: assign(node.names[0], Value::macro(&node)); break;
      case Node::Kind::Break: return Flow::Break;
      case Node::Kind::Continue: return Flow::Continue;
    }
    return Flow::Normal;
  }

  void exec_set(const Node& node) {
    Value value;
    if (node.expr) {
      value = eval(*node.expr);
    } else {
      std::string text;
      if (exec_body(node.body, text) != Flow::Normal) throw JinjaError("break or continue inside a set block");
      value = Value::string(std::move(text));
    }
    if (node.names.size() == 1) {
      assign(node.names[0], std::move(value));
      return;
    }
    const Value target = lookup(node.names[0]);
    if (!target.is_namespace()) throw JinjaError("cannot set an attribute of '" + node.names[0] + "' (not a namespace)");
    target.set_attribute(node.names[1], std::move(value));
  }

  void bind(const std::vector<std::string>& names, const Value& item) {
    if (names.size() == 1) {
      assign(names[0], item);
      return;
    }
    if (!item.is_list() || item.items().size() != names.size()) {
      throw JinjaError("cannot unpack a " + item.type_name() + " into " + std::to_string(names.size()) + " loop variables");
    }
    for (size_t i = 0; i < names.size(); ++i) assign(names[i], item.items()[i]);
  }

  // What a for loop iterates: a list as it is (lists never change), else a list made from a
  // dict's keys or a string's characters.
  Value iteration_items(const Value& v) {
    if (v.is_list()) return v;
    if (v.is_undefined() || v.is_none()) return Value::list();
    if (v.is_dict() || v.is_string()) return apply_filter("list", v, CallArgs{}, budget_);
    throw JinjaError("cannot iterate over a " + v.type_name());
  }

  void exec_for(const Node& node, std::string& out) {
    const Value iterable = iteration_items(eval(*node.expr));
    const ValueList* items = &iterable.items();
    ValueList kept;
    if (node.condition) {
      for (const Value& item : *items) {
        budget_.step();
        scopes_.push_back(Value::dict());
        bind(node.names, item);
        const bool keep = eval(*node.condition).truthy();
        scopes_.pop_back();
        if (keep) kept.push_back(item);
      }
      items = &kept;
    }
    if (items->empty()) {
      exec_body(node.else_body, out);
      return;
    }
    const int64_t n = static_cast<int64_t>(items->size());
    for (int64_t i = 0; i < n; ++i) {
      budget_.step();
      const auto at = [&](int64_t k) { return (*items)[static_cast<size_t>(k)]; };
      Value loop = Value::dict({{"index", Value::integer(i + 1)},
                                {"index0", Value::integer(i)},
                                {"revindex", Value::integer(n - i)},
                                {"revindex0", Value::integer(n - i - 1)},
                                {"first", Value::boolean(i == 0)},
                                {"last", Value::boolean(i == n - 1)},
                                {"length", Value::integer(n)},
                                {"previtem", i > 0 ? at(i - 1) : Value()},
                                {"nextitem", i + 1 < n ? at(i + 1) : Value()}});
      scopes_.push_back(Value::dict({{"loop", loop}}));
      bind(node.names, at(i));
      const Flow flow = exec_body(node.body, out);
      scopes_.pop_back();
      if (flow == Flow::Break) break;
    }
  }

  // ---- expressions ----

  Value eval(const Expr& e) {
    const Budget::Depth nested(budget_, Budget::Depth::Evaluation);
    switch (e.kind) {
      case Expr::Kind::Literal: return e.literal;
      case Expr::Kind::Name: return lookup(e.name);
      case Expr::Kind::List: {
        budget_.step(static_cast<int64_t>(e.operands.size()));
        ValueList items;
        for (const auto& item : e.operands) items.push_back(eval(*item));
        return Value::list(std::move(items));
      }
      case Expr::Kind::Dict: {
        budget_.step(static_cast<int64_t>(e.operands.size() / 2));
        ValueDict entries;
        for (size_t i = 0; i + 1 < e.operands.size(); i += 2) {
          const Value key = eval(*e.operands[i]);
          if (!key.is_string() && key.kind() != Value::Kind::Int) throw JinjaError("dict keys must be strings or integers");
          put(entries, key, eval(*e.operands[i + 1]));
        }
        return Value::dict(std::move(entries));
      }
      case Expr::Kind::Unary: return eval_unary(e);
      case Expr::Kind::Binary: return eval_binary(e);
      case Expr::Kind::Ternary:
        if (eval(*e.operands[1]).truthy()) return eval(*e.operands[0]);
        return e.operands[2] ? eval(*e.operands[2]) : Value();
      case Expr::Kind::Attribute: {
        const Value object = eval(*e.operands[0]);
        return object.is_dict() ? object.get(e.name) : Value();
      }
      case Expr::Kind::Subscript: return subscript(eval(*e.operands[0]), eval(*e.operands[1]));
      case Expr::Kind::Slice: return slice(e);
      case Expr::Kind::Call: return call(e);
      case Expr::Kind::Filter: return apply_filter(e.name, eval(*e.operands[0]), eval_args(e), budget_);
      case Expr::Kind::Test: {
        const bool passed = apply_test(e.name, eval(*e.operands[0]), eval_args(e), budget_);
        return Value::boolean(passed != e.negated);
      }
    }
    throw JinjaError("unknown expression");
  }

  // A dict entry: a later key replaces an earlier one, as in Python.
  static void put(ValueDict& entries, const Value& key, Value value) {
    for (DictEntry& e : entries) {
      if (same_key(e.key, key)) {
        e.value = std::move(value);
        return;
      }
    }
    entries.emplace_back(key, std::move(value));
  }

  // Arguments after operands[0] (the callee, filter input or test subject).
  CallArgs eval_args(const Expr& e) {
    CallArgs args;
    for (size_t i = 1; i < e.operands.size(); ++i) args.positional.push_back(eval(*e.operands[i]));
    for (const auto& [name, value] : e.keyword_args) args.keyword.emplace_back(name, eval(*value));
    return args;
  }

  Value eval_unary(const Expr& e) {
    const Value v = eval(*e.operands[0]);
    if (e.name == "not") return Value::boolean(!v.truthy());
    if (!v.is_number()) throw JinjaError("unary '" + e.name + "' on a " + v.type_name());
    if (e.name == "+") return v;
    return v.kind() == Value::Kind::Float ? Value::number(-v.as_double()) : number_op("-", Value::integer(0), v);
  }

  Value eval_binary(const Expr& e) {
    const std::string& op = e.name;
    if (op == "and" || op == "or") {
      Value left = eval(*e.operands[0]);
      if (left.truthy() == (op == "or")) return left;
      return eval(*e.operands[1]);
    }
    const Value a = eval(*e.operands[0]);
    const Value b = eval(*e.operands[1]);
    if (op == "==") return Value::boolean(Value::equal(a, b, budget_));
    if (op == "!=") return Value::boolean(!Value::equal(a, b, budget_));
    if (op == "<") return Value::boolean(compare_values(a, b, budget_) < 0);
    if (op == "<=") return Value::boolean(compare_values(a, b, budget_) <= 0);
    if (op == ">") return Value::boolean(compare_values(a, b, budget_) > 0);
    if (op == ">=") return Value::boolean(compare_values(a, b, budget_) >= 0);
    if (op == "in") return Value::boolean(contains(b, a, budget_));
    if (op == "not in") return Value::boolean(!contains(b, a, budget_));
    if (op == "~") return concatenated(a.to_output(budget_), b.to_output(budget_));
    if (a.is_number() && b.is_number()) return number_op(op, a, b);
    if (op == "+" && a.is_string() && b.is_string()) return concatenated(a.as_string(), b.as_string());
    if (op == "+" && a.is_list() && b.is_list()) {
      budget_.step(static_cast<int64_t>(a.items().size() + b.items().size()));
      ValueList items = a.items();
      items.insert(items.end(), b.items().begin(), b.items().end());
      return Value::list(std::move(items));
    }
    if (op == "*" && ((a.is_string() && b.is_number()) || (a.is_number() && b.is_string()))) {
      return repeated(a.is_string() ? a.as_string() : b.as_string(), a.is_string() ? b.as_int() : a.as_int());
    }
    throw JinjaError("template line " + std::to_string(e.line) + ": unsupported operand types for '" + op +
                     "': " + a.type_name() + " and " + b.type_name());
  }

  Value concatenated(const std::string& a, const std::string& b) {
    budget_.fits_string(a.size() + b.size());
    return Value::string(budget_.built(a + b));
  }

  Value repeated(const std::string& s, int64_t times) {
    if (times <= 0 || s.empty()) return Value::string("");
    size_t total = 0;
    if (__builtin_mul_overflow(s.size(), static_cast<uint64_t>(times), &total)) total = SIZE_MAX;
    budget_.fits_string(total);  // before anything is built: 'x' * 10**12 stops here
    std::string out;
    out.reserve(total);
    for (int64_t i = 0; i < times; ++i) out += s;
    return Value::string(budget_.built(std::move(out)));
  }

  Value subscript(const Value& object, const Value& index) {
    if (object.is_dict()) return object.get(index);
    if (object.is_undefined()) return Value();
    if (!index.is_number()) throw JinjaError("a " + object.type_name() + " index must be a number");
    if (object.is_list()) {
      const int64_t n = static_cast<int64_t>(object.items().size());
      int64_t i = index.as_int();
      if (i < 0) i += n;
      return i >= 0 && i < n ? object.items()[static_cast<size_t>(i)] : Value();
    }
    if (object.is_string()) {
      const std::string& s = object.as_string();
      const std::vector<size_t> offsets = char_offsets(s, budget_);
      const int64_t n = static_cast<int64_t>(offsets.size() - 1);
      int64_t i = index.as_int();
      if (i < 0) i += n;
      if (i < 0 || i >= n) return Value();
      const size_t k = static_cast<size_t>(i);
      return Value::string(s.substr(offsets[k], offsets[k + 1] - offsets[k]));
    }
    throw JinjaError("cannot subscript a " + object.type_name());
  }

  Value slice(const Expr& e) {
    const Value object = eval(*e.operands[0]);
    const Value start = e.operands[1] ? eval(*e.operands[1]) : Value();
    const Value stop = e.operands[2] ? eval(*e.operands[2]) : Value();
    const Value step_value = e.operands[3] ? eval(*e.operands[3]) : Value();
    if (object.is_list()) {
      const SliceRange r = slice_range(static_cast<int64_t>(object.items().size()), start, stop, step_value);
      budget_.step(r.count);
      ValueList out;
      for (int64_t k = 0; k < r.count; ++k) out.push_back(object.items()[static_cast<size_t>(nth_index(r.start, r.step, k))]);
      return Value::list(std::move(out));
    }
    if (object.is_string()) {
      const std::string& s = object.as_string();
      const std::vector<size_t> offsets = char_offsets(s, budget_);
      const SliceRange r = slice_range(static_cast<int64_t>(offsets.size() - 1), start, stop, step_value);
      std::string out;
      for (int64_t k = 0; k < r.count; ++k) {
        const size_t c = static_cast<size_t>(nth_index(r.start, r.step, k));
        out.append(s, offsets[c], offsets[c + 1] - offsets[c]);
      }
      return Value::string(budget_.built(std::move(out)));
    }
    if (object.is_undefined()) return Value();
    throw JinjaError("cannot slice a " + object.type_name());
  }

  Value call(const Expr& e) {
    const Expr& callee = *e.operands[0];
    CallArgs args = eval_args(e);
    if (callee.kind == Expr::Kind::Attribute) {
      const Value object = eval(*callee.operands[0]);
      const Value member = object.get(callee.name);
      if (member.is_callable()) return call_value(member, args, callee.name);
      return call_method(object, callee.name, args, budget_);
    }
    const Value fn = eval(callee);
    const std::string name = callee.kind == Expr::Kind::Name ? callee.name : "expression";
    if (fn.is_undefined()) throw JinjaError("unknown function '" + name + "'");
    return call_value(fn, args, name);
  }

  Value call_value(const Value& fn, const CallArgs& args, const std::string& name) {
    if (fn.kind() == Value::Kind::Macro) return call_macro(*fn.macro_definition(), args);
    if (fn.kind() == Value::Kind::Function) return call_function(fn.as_string(), args);
    throw JinjaError("'" + name + "' is not callable");
  }

  Value call_function(const std::string& name, const CallArgs& args) {
    if (name == "raise_exception") {
      throw JinjaError("template raised an exception: " + args.get(0, "message").to_output(budget_));
    }
    if (name == "namespace") return make_namespace(args);
    if (name == "range") return range(args);
    if (name == "strftime_now") return strftime_now(args.get(0, "format"));
    throw JinjaError("unknown function '" + name + "'");
  }

  Value make_namespace(const CallArgs& args) {
    ValueDict entries;
    for (const Value& arg : args.positional) {
      if (!arg.is_dict()) continue;
      budget_.step(static_cast<int64_t>(arg.entries().size()));
      for (const DictEntry& e : arg.entries()) {
        if (e.key.is_string()) put(entries, e.key, e.value);
      }
    }
    budget_.step(static_cast<int64_t>(args.keyword.size()));
    for (const auto& [k, v] : args.keyword) put(entries, Value::string(k), v);
    return Value::namespace_of(std::move(entries));
  }

  Value range(const CallArgs& args) {
    const size_t n = args.positional.size();
    if (n < 1 || n > 3) throw JinjaError("range() takes 1 to 3 arguments");
    const int64_t start = n >= 2 ? args.positional[0].as_int() : 0;
    const int64_t stop = n >= 2 ? args.positional[1].as_int() : args.positional[0].as_int();
    const int64_t step = n == 3 ? args.positional[2].as_int() : 1;
    if (step == 0) throw JinjaError("range() step cannot be zero");
    const int64_t count = range_length(start, stop, step);
    budget_.step(count);  // before the list is made: range(10**9) stops here
    ValueList items;
    items.reserve(static_cast<size_t>(count));
    for (int64_t k = 0; k < count; ++k) items.push_back(Value::integer(nth_index(start, step, k)));
    return Value::list(std::move(items));
  }

  Value strftime_now(const Value& format) {
    if (!format.is_string()) throw JinjaError("strftime_now expects a format string");
    budget_.work(format.as_string().size());
    const int64_t clock = budget_.options().now_unix_seconds;
    const std::time_t now = clock >= 0 ? static_cast<std::time_t>(clock) : std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    char buf[256];
    const size_t n = std::strftime(buf, sizeof buf, format.as_string().c_str(), &tm);
    return Value::string(std::string(buf, n));
  }

  Value call_macro(const Node& macro, const CallArgs& args) {
    const Budget::Depth call(budget_, Budget::Depth::MacroCall);
    std::vector<Value> saved = std::move(scopes_);
    scopes_ = {saved.front(), Value::dict()};
    for (size_t i = 1; i < macro.names.size(); ++i) {
      Value v = args.get(i - 1, macro.names[i]);
      if (v.is_undefined() && macro.defaults[i - 1]) v = eval(*macro.defaults[i - 1]);
      assign(macro.names[i], v);
    }
    std::string out;
    exec_body(macro.body, out);
    scopes_ = std::move(saved);
    return Value::string(std::move(out));
  }

  Budget budget_;
  std::vector<Value> scopes_;  // dicts, innermost last; scopes_[0] holds the globals
};

}  // namespace

Result<std::string> render(const Template& tmpl, const Value& globals, const RenderOptions& options, Limit* stopped_by) {
  if (stopped_by) *stopped_by = Limit::None;
  try {
    return Interpreter(options).run(tmpl, globals);
  } catch (const LimitError& e) {
    if (stopped_by) *stopped_by = e.limit();
    return Status::error(e.what());
  } catch (const std::exception& e) {  // JinjaError, or std::bad_alloc on a hostile template
    return Status::error(e.what());
  }
}

}  // namespace inferscope::jinja
