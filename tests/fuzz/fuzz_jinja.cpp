// libFuzzer target for the Jinja engine (lexer, parser, interpreter): an arbitrary template
// rendered over a conversation (fuzz_input.h). Parsing and rendering either succeed or fail
// with a message; a success stays within the output limit. The render limits are scaled down
// so that inputs which run to a limit stay fast: any input that takes long (-timeout) has
// found work the budget does not count. The depth limits stay as shipped: the stack is
// what they protect.
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/chat/jinja_interpreter.h"
#include "engine/chat/jinja_parser.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace inferscope::jinja;
using inferscope::fuzz::fail;

RenderOptions fuzz_limits() {
  RenderOptions options;
  options.max_output_bytes = 1 << 16;
  options.max_steps = 1 << 16;
  options.max_work_bytes = 1 << 22;
  options.now_unix_seconds = 1700000000;  // strftime_now stays reproducible
  return options;
}

Value globals_of(const inferscope::fuzz::TemplateInput& input) {
  ValueList messages;
  for (const auto& m : input.messages) {
    messages.push_back(Value::dict({{"role", Value::string(m.role)}, {"content", Value::string(m.content)}}));
  }
  return Value::dict({{"messages", Value::list(std::move(messages))},
                      {"add_generation_prompt", Value::boolean(true)},
                      {"bos_token", Value::string("<s>")},
                      {"eos_token", Value::string("</s>")}});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto input = inferscope::fuzz::split_template_input(std::string_view(reinterpret_cast<const char*>(data), size));
  auto tmpl = parse(input.source);
  if (!tmpl) {
    if (tmpl.message().empty()) fail("fuzz_jinja", "parse error without a message", std::string(input.source));
    return 0;
  }
  const RenderOptions options = fuzz_limits();
  Limit limit = Limit::None;
  auto text = render(*tmpl, globals_of(input), options, &limit);
  if (text) {
    if (limit != Limit::None) fail("fuzz_jinja", "a limit reported on success", "");
    if (text->size() > options.max_output_bytes) fail("fuzz_jinja", "output over the limit", std::to_string(text->size()));
  } else if (text.message().empty()) {
    fail("fuzz_jinja", "render error without a message", "");
  }
  return 0;
}
