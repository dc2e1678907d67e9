#include "tests/support/chat_models.h"

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"

namespace inferscope::testing {

Status write_with_chat_template(const std::string& source, const std::string& chat_template, const std::string& path) {
  auto file = gguf::File::open(source);
  if (!file) return file.status();
  gguf::Writer writer;
  writer.copy_metadata(**file, "");
  writer.add_string("tokenizer.chat_template", chat_template);
  for (const gguf::TensorInfo& tensor : (*file)->tensors()) writer.add_tensor_copy(*file, tensor);
  return writer.write(path);
}

namespace {

std::string repeated(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

std::vector<HostileTemplate> make_hostile_templates() {
  const std::string chat = "{% for m in messages %}{{ m.content }}{% endfor %}";
  return {
      {"BillionStepLoop", "{% for i in range(1000000000) %}{{ i }}{% endfor %}" + chat, "step limit"},
      {"NestedLoops", "{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}" + chat, "step limit"},
      {"SelfRecursiveMacro", "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}" + chat, "macro calls nested deeper"},
      {"MutuallyRecursiveMacros",
       "{% macro a() %}{{ b() }}{% endmacro %}{% macro b() %}{{ a() }}{% endmacro %}{{ a() }}" + chat,
       "macro calls nested deeper"},
      {"GigabyteString", "{{ 'x' * 1000000000 }}" + chat, "output exceeds its limit"},
      {"DoublingString",
       "{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}" + chat,
       "output exceeds its limit"},
      {"DoublingList",
       "{% set ns = namespace(l=[1]) %}{% for i in range(64) %}{% set ns.l = ns.l + ns.l %}{% endfor %}" + chat,
       "step limit"},
      {"DeepParentheses", "{{ " + repeated("(", 100000) + "1" + repeated(")", 100000) + " }}" + chat,
       "nested deeper than 200 levels"},
      {"DeepBlocks", repeated("{% if true %}", 10000) + chat, "nested deeper than 200 levels"},
      {"DeepEvaluation",
       "{% macro f() %}" + repeated("{% if true %}", 150) + "{{ f() }}" + repeated("{% endif %}", 150) +
           "{% endmacro %}{{ f() }}" + chat,
       "evaluation nested deeper"},
      {"SelfNestingValue",
       "{% set ns = namespace(v=[]) %}{% for i in range(100000) %}{% set ns.v = [ns.v] %}{% endfor %}" + chat,
       "nests lists and dicts deeper"},
      {"ExponentialPrint",
       "{% set ns = namespace(v=[1]) %}{% for i in range(60) %}{% set ns.v = [ns.v, ns.v] %}{% endfor %}{{ ns.v }}" +
           chat,
       "output exceeds its limit"},
      {"ExponentialCompare",
       "{% set ns = namespace(a=[1], b=[1]) %}{% for i in range(60) %}{% set ns.a = [ns.a, ns.a] %}"
       "{% set ns.b = [ns.b, ns.b] %}{% endfor %}{{ ns.a == ns.b }}" + chat,
       "work limit"},
      {"QuadraticSearch",
       "{% set h = 'a' * 4000000 %}{% set n = 'a' * 2000000 ~ 'b' %}{% for i in range(1000) %}{{ n in h }}{% endfor %}" +
           chat,
       "work limit"},
      {"RepeatedCopies",
       "{% set s = 'x' * 4000000 %}{% for i in range(100000) %}{% set t = s ~ i %}{% endfor %}" + chat, "work limit"},
  };
}

}  // namespace

const std::vector<HostileTemplate>& hostile_templates() {
  static const std::vector<HostileTemplate> templates = make_hostile_templates();
  return templates;
}

}  // namespace inferscope::testing
