// The filters (`x | trim`), tests (`x is defined`) and methods (`s.strip()`, `d.items()`) that
// chat templates use, with Jinja's and Python's semantics. Each throws JinjaError on an unknown
// name or a wrong argument, and charges what it builds and scans to the render's Budget.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/chat/jinja_budget.h"
#include "engine/chat/jinja_value.h"

namespace inferscope::jinja {

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;

  // The argument at `index`, or the keyword `name`; undefined when neither was given.
  Value get(size_t index, std::string_view name) const;
  Value named(std::string_view name) const;  // keyword only
};

Value apply_filter(std::string_view name, const Value& input, const CallArgs& args, Budget& budget);
bool apply_test(std::string_view name, const Value& input, const CallArgs& args, Budget& budget);
Value call_method(const Value& object, std::string_view name, const CallArgs& args, Budget& budget);

}  // namespace inferscope::jinja
