// The Jinja subset chat templates use: expected outputs follow Jinja2's documented semantics
// (and Python's for operators, methods and reprs), with trim_blocks and lstrip_blocks on as in
// Hugging Face's apply_chat_template.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "engine/chat/jinja_interpreter.h"
#include "engine/chat/jinja_parser.h"

namespace inferscope::jinja {
namespace {

Result<std::string> try_render(std::string_view source, const Value& globals = Value::dict(),
                               const RenderOptions& options = {}) {
  auto tmpl = parse(source);
  if (!tmpl) return tmpl.status();
  return render(*tmpl, globals, options);
}

std::string rendered(std::string_view source, const Value& globals = Value::dict()) {
  auto r = try_render(source, globals);
  EXPECT_TRUE(r.is_ok()) << source << "\n-> " << r.message();
  return r ? *r : "<error>";
}

std::string error_of(std::string_view source, const Value& globals = Value::dict(), const RenderOptions& options = {}) {
  auto r = try_render(source, globals, options);
  EXPECT_FALSE(r.is_ok()) << source << " rendered " << (r ? *r : "");
  return r ? "" : r.message();
}

TEST(JinjaExpressions, Arithmetic) {
  EXPECT_EQ(rendered("{{ 1 + 2 * 3 }}|{{ (1 + 2) * 3 }}|{{ 2 ** 10 }}"), "7|9|1024");
  EXPECT_EQ(rendered("{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 4 / 2 }}"), "3 -4 1 2 3.5 2.0");
  EXPECT_EQ(rendered("{{ 1.5 + 1 }}|{{ -3 }}|{{ 10 - 2 - 3 }}"), "2.5|-3|5");
  EXPECT_EQ(rendered("{{ (-1) ** 3 }}|{{ 0 ** 0 }}|{{ 2 ** -1 }}|{{ 'ab'[1::9223372036854775807] }}"), "-1|1|0.5|b");
  EXPECT_EQ(rendered("{{ 'ab' * 3 }}|{{ 'a' + 'b' }}|{{ [1] + [2] }}"), "ababab|ab|[1, 2]");
  EXPECT_EQ(rendered("{{ 'a' ~ 1 ~ none ~ true }}"), "a1NoneTrue");
}

TEST(JinjaExpressions, LogicComparisonsAndMembership) {
  EXPECT_EQ(rendered("{{ 1 < 2 and 'x' or 'y' }}|{{ 0 or 'z' }}|{{ not 0 }}|{{ not 'a' }}"), "x|z|True|False");
  EXPECT_EQ(rendered("{{ 1 == 1.0 }} {{ 'a' != 'b' }} {{ 2 >= 3 }} {{ 'a' < 'b' }}"), "True True False True");
  EXPECT_EQ(rendered("{{ 'ell' in 'hello' }} {{ 3 not in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 'q' in {'k': 1} }}"),
            "True True True False");
  EXPECT_EQ(rendered("{{ 'yes' if 1 > 2 else 'no' }}|{{ 'a' if false }}|{{ 'b' if true }}"), "no||b");
  EXPECT_EQ(rendered("{{ [1, 2] == [1, 2] }} {{ {'a': 1} == {'a': 1} }}"), "True True");
}

TEST(JinjaExpressions, SubscriptsSlicesAndAttributes) {
  EXPECT_EQ(rendered("{{ [1, 2, 3][-1] }} {{ [1, 2, 3][5] is defined }} {{ 'hello'[1:3] }} {{ 'abc'[::-1] }}"),
            "3 False el cba");
  EXPECT_EQ(rendered("{{ [1, 2, 3, 4][::2] }} {{ [1, 2, 3][1:] }} {{ [1, 2, 3][:-1] }} {{ [1, 2, 3][::-1] }}"),
            "[1, 3] [2, 3] [1, 2] [3, 2, 1]");
  EXPECT_EQ(rendered("{{ 'héllo'[1] }}{{ 'héllo'[::-1] }}"), "éolléh");  // characters, not bytes
  const Value d = Value::dict({{"d", Value::dict({{"a", Value::integer(1)}, {"b", Value::string("x")}})}});
  EXPECT_EQ(rendered("{{ d.a }} {{ d['b'] }} {{ d.missing is defined }} {{ d.missing }}|", d), "1 x False |");
}

TEST(JinjaExpressions, LiteralsPrintLikePython) {
  EXPECT_EQ(rendered("{{ [1, 'a', none, true, 2.5] }}"), "[1, 'a', None, True, 2.5]");
  EXPECT_EQ(rendered("{{ {'k': 'v'} }}|{{ none }}|{{ undefined_name }}|{{ \"it's\" }}"), "{'k': 'v'}|None||it's");
  EXPECT_EQ(rendered("{{ 'a\\nb\\tc\\u00e9' }}"), "a\nb\tc\xC3\xA9");
}

// Integer keys as Python keeps them (Seed-OSS's thinking-budget table): printed bare, found by
// an integer subscript and not by its text, sorted numerically by dictsort; tojson writes them
// as strings, as json.dumps does. Expected: Python's jinja2 3.1.6 on the same templates.
TEST(JinjaExpressions, IntegerDictKeys) {
  EXPECT_EQ(rendered("{% set d = {512: 'b', 0: 'a', 'k': 1} %}{{ d }}|{{ d[512] }}|{{ d['512'] is defined }}|{{ d | tojson }}"),
            "{512: 'b', 0: 'a', 'k': 1}|b|False|{\"512\": \"b\", \"0\": \"a\", \"k\": 1}");
  EXPECT_EQ(rendered("{% for k, v in {16: 4, 2: 1, 8: 2} | dictsort %}{{ k }}:{{ v }} {% endfor %}"), "2:1 8:2 16:4 ");
  EXPECT_EQ(rendered("{% for k, v in {'b': 1, 'A': 2, 'c': 0} | dictsort(by='value', reverse=true) %}{{ k }}{% endfor %}|"
                     "{% for k, v in {'b': 1, 'A': 2, 'a': 3} | dictsort %}{{ k }}{% endfor %}|"
                     "{% for k, v in {'b': 1, 'A': 2, 'a': 3} | dictsort(true) %}{{ k }}{% endfor %}"),
            "Abc|Aab|Aab");
  EXPECT_EQ(rendered("{{ [3, 1, 2] | min }}{{ [3, 1, 2] | max }}{{ ['b', 'a'] | min }}"), "13a");
  EXPECT_EQ(rendered("{{ '{}-{}-{{x}}'.format('a', 'b') }}|{{ '{1}-{0}'.format('a', 'b') }}"), "a-b-{x}|b-a");
  EXPECT_NE(error_of("{{ '{}-{0}'.format('a') }}").find("numbering"), std::string::npos);
}

TEST(JinjaFilters, StringFilters) {
  EXPECT_EQ(rendered("{{ '  x ' | trim }}|{{ 'Hi' | upper }}|{{ 'Hi' | lower }}|{{ 'hELLO world' | capitalize }}"),
            "x|HI|hi|Hello world");
  EXPECT_EQ(rendered("{{ 'hello world' | title }}|{{ 'aXbX' | replace('X', '-') }}|{{ 12 | string + 'x' }}"),
            "Hello World|a-b-|12x");
  // Filters bind tighter than +: only the middle operand is trimmed.
  EXPECT_EQ(rendered("{{ 'a' + ' b ' | trim + 'c' }}"), "abc");
}

TEST(JinjaFilters, SequenceAndConversionFilters) {
  EXPECT_EQ(rendered("{{ [1, 2] | length }}|{{ 'héllo' | length }}|{{ {'a': 1} | count }}"), "2|5|1");
  EXPECT_EQ(rendered("{{ ['a', 'b'] | join(', ') }}|{{ [3, 4] | first }}|{{ [3, 4] | last }}|{{ 'xy' | first }}"),
            "a, b|3|4|x");
  EXPECT_EQ(rendered("{{ '42' | int + 1 }}|{{ 'x' | int }}|{{ 3.9 | int }}|{{ '2.5' | float }}"), "43|0|3|2.5");
  EXPECT_EQ(rendered("{% for k, v in {'a': 1, 'b': 2} | items %}{{ k }}={{ v }};{% endfor %}"), "a=1;b=2;");
  EXPECT_EQ(rendered("{{ missing | default('d') }} {{ '' | default('e', true) }} {{ 0 | default(5) }}"), "d e 0");
  EXPECT_EQ(rendered("{{ [{'r': 'u'}, {'r': 'a'}, {'r': 'u'}] | selectattr('r', 'equalto', 'u') | list | length }}"),
            "2");
  EXPECT_EQ(rendered("{{ [{'r': 'u'}, {'r': 'a'}] | map(attribute='r') | join }}|{{ [1, 2, 3] | reject('odd') | list }}"),
            "ua|[2]");
}

TEST(JinjaFilters, ToJsonMatchesPythonJsonDumps) {
  EXPECT_EQ(rendered("{{ {'a': [1, 'x', none, true], 'b': 1.5, 'c': 'q\"\\n'} | tojson }}"),
            "{\"a\": [1, \"x\", null, true], \"b\": 1.5, \"c\": \"q\\\"\\n\"}");
  EXPECT_EQ(rendered("{{ {'a': [1], 'b': {}} | tojson(indent=2) }}"), "{\n  \"a\": [\n    1\n  ],\n  \"b\": {}\n}");
  EXPECT_EQ(rendered("{{ 'é' | tojson }}"), "\"\xC3\xA9\"");  // ensure_ascii=False, as transformers calls it
}

TEST(JinjaMethods, StringAndDictMethods) {
  EXPECT_EQ(rendered("{{ '  x  '.strip() }}|{{ 'xxhixx'.lstrip('x') }}|{{ 'xxhixx'.rstrip('x') }}|{{ 'a,b'.split(',') }}"),
            "x|hixx|xxhi|['a', 'b']");
  EXPECT_EQ(rendered("{{ ' a  b '.split() }}|{{ 'hello'.startswith('he') }}|{{ 'hello'.endswith(('x', 'lo')) }}"),
            "['a', 'b']|True|True");
  EXPECT_EQ(rendered("{{ 'ab cd'.title() }}|{{ 'Ab'.upper() }}{{ 'Ab'.lower() }}|{{ 'user'.capitalize() }}"),
            "Ab Cd|ABab|User");
  EXPECT_EQ(rendered("{% set d = {'a': 1} %}{{ d.get('a') }} {{ d.get('z', 7) }} {{ d.keys() | list }} {{ d.values() | list }}"),
            "1 7 ['a'] [1]");
}

TEST(JinjaTests, IsTests) {
  EXPECT_EQ(rendered("{{ x is defined }} {{ none is none }} {{ 'a' is string }} {{ 3 is number }} {{ 4 is even }}"),
            "False True True True True");
  EXPECT_EQ(rendered("{{ x is not defined }} {{ {} is mapping }} {{ [] is iterable }} {{ 9 is divisibleby(3) }}"),
            "True True True True");
  EXPECT_EQ(rendered("{{ 'a' is equalto 'a' }} {{ true is boolean }} {{ 1 is integer }} {{ 1.0 is float }}"),
            "True True True True");
  // `is` binds tighter than `not`: not (x is defined).
  EXPECT_EQ(rendered("{{ not x is defined }}"), "True");
}

TEST(JinjaWhitespace, DashesStripAllWhitespaceOnTheirSide) {
  EXPECT_EQ(rendered("a  {%- if true -%}  b  {%- endif -%}  c"), "abc");
  EXPECT_EQ(rendered("a \n {{- 'x' -}} \n b"), "axb");
  EXPECT_EQ(rendered("a {#- note -#} b"), "ab");
}

TEST(JinjaWhitespace, TrimBlocksAndLstripBlocks) {
  EXPECT_EQ(rendered("{% if true %}\nx\n{% endif %}\ny"), "x\ny");
  EXPECT_EQ(rendered("  {% if true %}\n  x\n  {% endif %}\n"), "  x\n");
  EXPECT_EQ(rendered("{{ 'v' }}\nz"), "v\nz");        // expression tags keep their newline
  EXPECT_EQ(rendered("a {% if true %}b{% endif %}"), "a b");  // not at line start: kept
  EXPECT_EQ(rendered("  {%+ if true %}x{% endif %}"), "  x");  // + turns lstrip_blocks off
  EXPECT_EQ(rendered("a {# note #} b"), "a  b");
  EXPECT_EQ(rendered("a\n  {# c #}\nb"), "a\nb");
  EXPECT_EQ(rendered("{{ 'a' }}\n"), "a");  // keep_trailing_newline=False: one final newline goes
  EXPECT_EQ(rendered("a\n\n"), "a\n");
}

TEST(JinjaStatements, ForLoopVariables) {
  EXPECT_EQ(rendered("{% for x in [1, 2, 3] %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}"
                     "{{ loop.length }};{% endfor %}"),
            "10TrueFalse3;21FalseFalse3;32FalseTrue3;");
  EXPECT_EQ(rendered("{% for x in [] %}x{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(rendered("{% for x in [1, 2, 3, 4] if x is even %}{{ x }}{{ loop.index }}{% endfor %}"), "2142");
  EXPECT_EQ(rendered("{% for x in range(10) %}{% if x == 1 %}{% continue %}{% endif %}{% if x > 3 %}{% break %}"
                     "{% endif %}{{ x }}{% endfor %}"),
            "023");
  EXPECT_EQ(rendered("{% for c in 'ab' %}{{ c }}.{% endfor %}{% for k in {'p': 1, 'q': 2} %}{{ k }}{% endfor %}"), "a.b.pq");
  EXPECT_EQ(rendered("{{ range(3) }} {{ range(1, 7, 2) }} {{ range(3, 0, -1) }}"), "[0, 1, 2] [1, 3, 5] [3, 2, 1]");
}

TEST(JinjaStatements, ScopingAndNamespaces) {
  // A set inside a loop body stays in the body; namespace() attributes carry state out.
  EXPECT_EQ(rendered("{% set x = 1 %}{% for i in [1] %}{% set x = 2 %}{{ x }}{% endfor %}{{ x }}"), "21");
  EXPECT_EQ(rendered("{% set ns = namespace(n=0) %}{% for i in [1, 2, 3] %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}"),
            "6");
  EXPECT_EQ(rendered("{% if true %}{% set y = 'in if' %}{% endif %}{{ y }}"), "in if");
  const Value g = Value::dict({{"x", Value::integer(2)}});
  EXPECT_EQ(rendered("{% if x == 1 %}a{% elif x == 2 %}b{% else %}c{% endif %}", g), "b");
}

// {% set name %}...{% endset %} (Apriel, Cohere2 MoE, GigaChat 3, MiniCPM 5's templates): the
// block's rendered text. Expected: Python's jinja2 3.1.6 with trim_blocks and lstrip_blocks on.
TEST(JinjaStatements, BlockSetCapturesTheRenderedText) {
  const Value globals = Value::dict(
      {{"name", Value::string("Ana")}, {"items", Value::list({Value::string("u"), Value::string("v")})}});
  EXPECT_EQ(rendered("{% set greeting %}Hello {{ name }}!\n{% endset %}[{{ greeting | trim }}]{{ greeting | length }}"
                     "{% for m in items %}{% set line %}{{ m }}-{{ loop.index }}{% endset %}{{ line }};{% endfor %}",
                     globals),
            "[Hello Ana!]11u-1;v-2;");
  EXPECT_NE(error_of("{% set x %}never closed").find("endset"), std::string::npos);
}

TEST(JinjaStatements, Macros) {
  EXPECT_EQ(rendered("{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}"
                     "{{ greet('Bo') }} {{ greet('Al', punct='?') }}"),
            "Hi Bo! Hi Al?");
}

TEST(JinjaFunctions, StrftimeNowUsesTheGivenClock) {
  RenderOptions options;
  options.now_unix_seconds = 1725364800;  // 2024-09-03 12:00 UTC: the same date in every time zone up to +-11 h
  auto r = try_render("{{ strftime_now('%Y-%m-%d') }}|{{ strftime_now('%d %b %Y') }}", Value::dict(), options);
  ASSERT_TRUE(r.is_ok()) << r.message();
  EXPECT_EQ(*r, "2024-09-03|03 Sep 2024");
}

TEST(JinjaErrors, SyntaxErrorsNameTheProblem) {
  EXPECT_NE(error_of("{% if x %}no end").find("endif"), std::string::npos);
  EXPECT_NE(error_of("{{ 1 + }}").find("line 1"), std::string::npos);
  EXPECT_NE(error_of("{% frobnicate %}").find("frobnicate"), std::string::npos);
  EXPECT_NE(error_of("{{ 'abc }}").find("unterminated"), std::string::npos);
  EXPECT_NE(error_of("{{ x").find("unterminated"), std::string::npos);
  EXPECT_NE(error_of("a\n{# open").find("comment"), std::string::npos);
  EXPECT_NE(error_of("{{ 1 $ 2 }}").find("unexpected character"), std::string::npos);
}

TEST(JinjaErrors, RuntimeErrors) {
  EXPECT_NE(error_of("{{ x | frobnicate }}").find("unknown filter 'frobnicate'"), std::string::npos);
  EXPECT_NE(error_of("{{ x is frobnicated }}").find("unknown test"), std::string::npos);
  EXPECT_NE(error_of("{{ raise_exception('System role not supported') }}").find("System role not supported"),
            std::string::npos);
  EXPECT_NE(error_of("{{ 1 // 0 }}").find("division by zero"), std::string::npos);
  EXPECT_NE(error_of("{{ 'a' + 1 }}").find("unsupported operand"), std::string::npos);
  EXPECT_NE(error_of("{{ nothing() }}").find("unknown function 'nothing'"), std::string::npos);
  EXPECT_NE(error_of("{{ 'a'.frob() }}").find("unknown method"), std::string::npos);
  EXPECT_NE(error_of("{{ 9223372036854775807 + 1 }}").find("overflow"), std::string::npos);
}

// Every prefix of real templates must parse or fail cleanly, and render or fail cleanly.
TEST(JinjaErrors, TruncatedTemplatesFailCleanly) {
  for (const char* name : {"mistral-v3-instruct.jinja", "llama-3.1-instruct.jinja", "deepseek-coder-instruct.jinja"}) {
    std::ifstream in(std::string(INFERSCOPE_SOURCE_DIR) + "/tests/chat/templates/" + name);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_FALSE(text.empty()) << name;
    const Value globals = Value::dict({{"messages", Value::list({Value::dict({{"role", Value::string("user")},
                                                                               {"content", Value::string("hi")}})})}});
    for (size_t n = 0; n <= text.size(); n += 7) {
      auto tmpl = parse(std::string_view(text).substr(0, n));
      if (tmpl) (void)render(*tmpl, globals);
    }
  }
}

}  // namespace
}  // namespace inferscope::jinja
