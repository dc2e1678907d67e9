// The interpreter's limits against hostile templates (they come from model files): each runaway
// template stops with an error naming the limit it reached, and real templates over long
// conversations stay far inside every limit.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "engine/chat/jinja_interpreter.h"
#include "engine/chat/jinja_parser.h"
#include "tests/support/chat_models.h"

namespace inferscope::jinja {

// Test output names a limit by its number (jinja_error.h).
void PrintTo(Limit limit, std::ostream* os) { *os << "Limit " << static_cast<int>(limit); }

namespace {

using testing::HostileTemplate;

struct Outcome {
  bool ok = false;
  std::string text;  // the output, or the error
  Limit limit = Limit::None;
};

Outcome run(std::string_view source, const Value& globals = Value::dict(), const RenderOptions& options = {}) {
  auto tmpl = parse(source);
  if (!tmpl) return {false, tmpl.message(), Limit::None};
  Limit limit = Limit::None;
  auto text = render(*tmpl, globals, options, &limit);
  if (!text) return {false, text.message(), limit};
  return {true, *text, Limit::None};
}

Value conversation(int turns, size_t chars_per_message) {
  ValueList messages;
  for (int i = 0; i < turns; ++i) {
    const char* role = i % 2 == 0 ? "user" : "assistant";
    messages.push_back(Value::dict({{"role", Value::string(role)},
                                    {"content", Value::string(std::string(chars_per_message, 'a' + i % 26))}}));
  }
  return Value::dict({{"messages", Value::list(std::move(messages))},
                      {"add_generation_prompt", Value::boolean(true)},
                      {"bos_token", Value::string("<s>")},
                      {"eos_token", Value::string("</s>")}});
}

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(INFERSCOPE_SOURCE_DIR) + "/tests/chat/templates/" + name);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class HostileTemplates : public ::testing::TestWithParam<HostileTemplate> {};

TEST_P(HostileTemplates, StopAtALimitThatTheErrorNames) {
  const Outcome r = run(GetParam().source, conversation(3, 16));
  ASSERT_FALSE(r.ok) << "rendered " << r.text.size() << " bytes";
  EXPECT_NE(r.text.find(GetParam().stops_with), std::string::npos) << r.text;
}

INSTANTIATE_TEST_SUITE_P(All, HostileTemplates, ::testing::ValuesIn(testing::hostile_templates()),
                         [](const ::testing::TestParamInfo<HostileTemplate>& info) { return std::string(info.param.name); });

TEST(JinjaLimits, EachLimitIsReportedAsItself) {
  RenderOptions small;
  small.max_steps = 10000;
  EXPECT_EQ(run("{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}", Value::dict(), small).limit,
            Limit::Steps);
  EXPECT_EQ(run("{{ range(1000000000) | length }}", Value::dict(), small).limit, Limit::Steps);
  EXPECT_EQ(run("{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}").limit, Limit::CallDepth);
  EXPECT_EQ(run("{% for i in range(1000) %}{{ 'x' * 10000 }}{% endfor %}").limit, Limit::Output);
  EXPECT_EQ(run("{{ 'x' * 100000000000 }}").limit, Limit::Output);
  EXPECT_EQ(run("{% set ns = namespace(v=[]) %}{% for i in range(100) %}{% set ns.v = [ns.v] %}{% endfor %}").limit,
            Limit::ValueDepth);
  RenderOptions little_work;
  little_work.max_work_bytes = 1 << 20;
  EXPECT_EQ(run("{% set s = 'x' * 100000 %}{% for i in range(100) %}{% set t = s ~ i %}{% endfor %}", Value::dict(),
                little_work)
                .limit,
            Limit::Work);
  RenderOptions shallow;
  shallow.max_eval_depth = 20;
  EXPECT_EQ(run("{{ " + std::string(30, '[') + "1" + std::string(30, ']') + " }}", Value::dict(), shallow).limit, Limit::Nesting);
  // Errors that are not limits say so.
  EXPECT_EQ(run("{{ raise_exception('no') }}").limit, Limit::None);
}

TEST(JinjaLimits, LimitsAreExactAtTheirEdge) {
  RenderOptions options;
  options.max_steps = 100;
  // 1 output statement + 1 for + 98 iterations = 100 steps.
  EXPECT_TRUE(run("{% for i in range(49) %}{% endfor %}", Value::dict(), options).ok);
  EXPECT_FALSE(run("{% for i in range(200) %}{% endfor %}", Value::dict(), options).ok);
  options.max_output_bytes = 10;
  EXPECT_TRUE(run("{{ 'x' * 10 }}", Value::dict(), options).ok);
  EXPECT_EQ(run("{{ 'x' * 11 }}", Value::dict(), options).limit, Limit::Output);
}

TEST(JinjaLimits, SearchesStayLinear) {
  // A naive search of a 4 MB string for a 2 MB near-match takes hours; this one is linear.
  const Outcome r = run("{% set h = 'a' * 4000000 %}{% set n = 'a' * 2000000 ~ 'b' %}{{ n in h }} {{ (h ~ 'b').replace(n, 'c') | length }}");
  ASSERT_TRUE(r.ok) << r.text;
  EXPECT_EQ(r.text, "False 2000001");
}

TEST(JinjaLimits, NamespacesCannotHoldNamespaces) {
  EXPECT_NE(run("{% set ns = namespace() %}{% set ns.me = ns %}").text.find("cannot hold another namespace"), std::string::npos);
  EXPECT_NE(run("{% set ns = namespace() %}{% set ns.me = [ns] %}").text.find("cannot hold another namespace"), std::string::npos);
  EXPECT_NE(run("{% set a = namespace() %}{% set b = namespace(x=a) %}").text.find("cannot hold another namespace"),
            std::string::npos);
  // Only namespaces take attributes, as in Jinja.
  EXPECT_NE(run("{% set d = {'a': 1} %}{% set d.a = 2 %}").text.find("not a namespace"), std::string::npos);
  EXPECT_NE(run("{% set m = messages[0] %}{% set m.role = 'system' %}", conversation(1, 4)).text.find("not a namespace"),
            std::string::npos);
  // A list of namespaces is fine.
  EXPECT_EQ(run("{% set a = namespace(x=1) %}{% set l = [a, a] %}{% set a.x = 2 %}{{ l[1].x }}").text, "2");
}

// Real templates over a long conversation (400 turns, 200 KB) use a small part of every limit.
TEST(JinjaLimits, RealTemplatesFitLongConversations) {
  const Value globals = conversation(400, 500);
  for (const char* name : {"llama-3.1-instruct.jinja", "chatml-qwen2.5-instruct.jinja", "mistral-v3-instruct.jinja",
                           "gemma-it.jinja", "phi-3.5-mini-instruct.jinja", "deepseek-coder-instruct.jinja"}) {
    const std::string source = fixture(name);
    ASSERT_FALSE(source.empty()) << name;
    RenderOptions tight;  // a sixteenth of each default
    tight.max_steps >>= 4;
    tight.max_work_bytes >>= 4;
    const Outcome r = run(source, globals, tight);
    EXPECT_TRUE(r.ok) << name << ": " << r.text;
    EXPECT_GT(r.text.size(), 200000u) << name;
  }
}

}  // namespace
}  // namespace inferscope::jinja
