#include "engine/chat/chat_template.h"

#include <algorithm>
#include <cassert>

#include "engine/chat/jinja_json.h"
#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/tokenizer.h"

namespace inferscope {

namespace {

// For files without a template: a neutral transcript that base models continue sensibly.
constexpr std::string_view kPlainTemplate =
    "{%- for message in messages -%}"
    "{%- if message['role'] == 'system' -%}{{ message['content'] + '\\n\\n' }}"
    "{%- else -%}{{ message['role'] | capitalize + ': ' + message['content'] + '\\n' }}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ 'Assistant:' }}{%- endif -%}";

// Texts that close an assistant turn in the families' formats; they stop generation when the
// template writes them and the vocabulary has them as single tokens.
constexpr std::string_view kEndOfTurnTexts[] = {
    "<|im_end|>", "<|eot_id|>", "<|eom_id|>", "<end_of_turn>", "<|end|>", "<|EOT|>", "<|endoftext|>",
    "<|end_of_text|>", "<|END_OF_TURN_TOKEN|>", "<|end_of_turn|>", "<｜end▁of▁sentence｜>",
};

bool contains(std::string_view haystack, std::string_view needle) { return haystack.find(needle) != std::string_view::npos; }

// The id of the token whose text is exactly `text`, or -1.
int32_t single_token(const Tokenizer& tokenizer, std::string_view text) {
  const std::vector<int32_t> ids = tokenizer.encode(text, false, true);
  if (ids.size() == 1 && tokenizer.token_text(ids[0]) == text) return ids[0];
  return -1;
}

std::vector<int32_t> find_stop_tokens(const Tokenizer& tokenizer, std::string_view source) {
  std::vector<int32_t> ids;
  for (int32_t id = 0; id < tokenizer.n_vocab(); ++id) {
    if (tokenizer.is_end_of_generation(id)) ids.push_back(id);
  }
  for (std::string_view text : kEndOfTurnTexts) {
    if (!contains(source, text)) continue;
    const int32_t id = single_token(tokenizer, text);
    if (id >= 0) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

// The conversation for_chat() tries a file's template on: the turns every chat has.
const std::vector<ChatMessage>& trial_conversation() {
  static const std::vector<ChatMessage> messages = {
      {"user", "Hello!"}, {"assistant", "Hello, how can I help?"}, {"user", "Tell me a story."}};
  return messages;
}

std::shared_ptr<const jinja::Template> plain_template() {
  static const std::shared_ptr<const jinja::Template> plain = [] {
    auto parsed = jinja::parse(kPlainTemplate);
    assert(parsed && "the plain template parses");
    return std::make_shared<const jinja::Template>(std::move(*parsed));
  }();
  return plain;
}

// A message as the hub library's conversations hold it: role and content, and only when present
// tool_calls (each {id, type: "function", function: {name, arguments}}) and tool_call_id.
jinja::Value message_value(const ChatMessage& m) {
  jinja::ValueDict entries = {{"role", jinja::Value::string(m.role)}, {"content", jinja::Value::string(m.content)}};
  if (!m.tool_calls.empty()) {
    jinja::ValueList calls;
    for (const ChatToolCall& call : m.tool_calls) {
      const jinja::Value function = jinja::Value::dict(
          {{"name", jinja::Value::string(call.name)}, {"arguments", jinja::value_from_json_text(call.arguments)}});
      calls.push_back(jinja::Value::dict(
          {{"id", jinja::Value::string(call.id)}, {"type", jinja::Value::string("function")}, {"function", function}}));
    }
    entries.emplace_back("tool_calls", jinja::Value::list(std::move(calls)));
  }
  if (!m.tool_call_id.empty()) entries.emplace_back("tool_call_id", jinja::Value::string(m.tool_call_id));
  return jinja::Value::dict(std::move(entries));
}

jinja::Value message_list(const std::vector<ChatMessage>& messages) {
  jinja::ValueList list;
  for (const ChatMessage& m : messages) list.push_back(message_value(m));
  return jinja::Value::list(std::move(list));
}

}  // namespace

const char* chat_family_name(ChatFamily family) {
  switch (family) {
    case ChatFamily::ChatML: return "chatml";
    case ChatFamily::Llama2: return "llama2";
    case ChatFamily::Llama3: return "llama3";
    case ChatFamily::Mistral: return "mistral";
    case ChatFamily::Phi3: return "phi3";
    case ChatFamily::Gemma: return "gemma";
    case ChatFamily::Zephyr: return "zephyr";
    case ChatFamily::DeepSeek: return "deepseek";
    case ChatFamily::Other: return "other";
    case ChatFamily::None: return "none";
  }
  return "other";
}

ChatFamily detect_chat_family(std::string_view s) {
  if (s.empty()) return ChatFamily::None;
  if (contains(s, "<|im_start|>")) return ChatFamily::ChatML;
  if (contains(s, "<|start_header_id|>")) return ChatFamily::Llama3;
  if (contains(s, "<start_of_turn>")) return ChatFamily::Gemma;
  if (contains(s, "<|assistant|>") && contains(s, "<|end|>")) return ChatFamily::Phi3;
  if (contains(s, "<|user|>") && contains(s, "<|assistant|>")) return ChatFamily::Zephyr;
  if (contains(s, "[INST]")) return contains(s, "<<SYS>>") ? ChatFamily::Llama2 : ChatFamily::Mistral;
  if (contains(s, "### Instruction:") || contains(s, "<｜User｜>") || (contains(s, "'User: '") && contains(s, "Assistant:"))) {
    return ChatFamily::DeepSeek;
  }
  return ChatFamily::Other;
}

Result<ChatTemplate> ChatTemplate::from_source(std::string source, std::string bos_token, std::string eos_token) {
  if (source.size() > kMaxChatTemplateBytes) {
    return Status::error("chat template: " + std::to_string(source.size()) + " bytes, over the limit of " +
                         std::to_string(kMaxChatTemplateBytes) + " bytes");
  }
  ChatTemplate t;
  t.has_template_ = !source.empty();
  t.family_ = detect_chat_family(source);
  t.plain_ = plain_template();
  if (t.has_template_) {
    auto parsed = jinja::parse(source);
    if (!parsed) return Status::error("chat template: " + parsed.message());
    t.template_ = std::make_shared<const jinja::Template>(std::move(*parsed));
  } else {
    t.template_ = t.plain_;
  }
  t.source_ = std::move(source);
  t.bos_token_ = std::move(bos_token);
  t.eos_token_ = std::move(eos_token);
  return t;
}

Result<ChatTemplate> ChatTemplate::from_tokenizer(std::string source, const Tokenizer& tokenizer) {
  const std::string bos = tokenizer.bos_id() >= 0 ? tokenizer.token_text(tokenizer.bos_id()) : "";
  const std::string eos = tokenizer.eos_id() >= 0 ? tokenizer.token_text(tokenizer.eos_id()) : "";
  auto t = from_source(std::move(source), bos, eos);
  if (!t) return t;
  t->stop_token_ids_ = find_stop_tokens(tokenizer, t->source_);
  return t;
}

Result<ChatTemplate> ChatTemplate::from_gguf(const gguf::File& file, const Tokenizer& tokenizer) {
  auto source = file.get_string_or("tokenizer.chat_template", "");
  if (!source) return source.status();
  auto t = from_tokenizer(std::move(*source), tokenizer);
  if (!t) return Status::error(file.error_prefix() + t.message());
  return t;
}

Result<ChatTemplate> ChatTemplate::for_chat(const gguf::File& file, const Tokenizer& tokenizer) {
  auto source = file.get_string_or("tokenizer.chat_template", "");
  if (!source) return source.status();
  auto t = from_tokenizer(std::move(*source), tokenizer);
  std::string reason;
  if (t) {
    auto trial = t->render(trial_conversation(), true);
    if (trial) return t;
    reason = trial.message();
  } else {
    reason = t.message();
  }
  auto plain = from_tokenizer("", tokenizer);
  if (!plain) return plain;
  plain->fallback_reason_ = std::move(reason);
  return plain;
}

Result<std::string> ChatTemplate::render_with(const jinja::Template& tmpl, const std::vector<ChatMessage>& messages,
                                              bool add_generation_prompt, const jinja::RenderOptions& options,
                                              jinja::Limit* stopped_by) const {
  const jinja::Value globals = jinja::Value::dict({
      {"messages", message_list(messages)},
      {"add_generation_prompt", jinja::Value::boolean(add_generation_prompt)},
      {"bos_token", jinja::Value::string(bos_token_)},
      {"eos_token", jinja::Value::string(eos_token_)},
      // No tools: None, as the hub library's apply_chat_template passes it (a template asking
      // `tools is defined` or `tools is not none` must see the same as there).
      {"tools", jinja::Value::none()},
  });
  auto text = jinja::render(tmpl, globals, options, stopped_by);
  if (!text) return Status::error("chat template: " + text.message());
  return text;
}

Result<std::string> ChatTemplate::render(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                         const jinja::RenderOptions& options, jinja::Limit* stopped_by) const {
  return render_with(*template_, messages, add_generation_prompt, options, stopped_by);
}

Result<std::string> ChatTemplate::render_or_plain(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                                  std::string* fallback_reason, const jinja::RenderOptions& options) const {
  if (fallback_reason) fallback_reason->clear();
  jinja::Limit stopped_by = jinja::Limit::None;
  auto text = render(messages, add_generation_prompt, options, &stopped_by);
  if (text || stopped_by == jinja::Limit::None) return text;
  if (fallback_reason) *fallback_reason = text.message();
  return render_plain(messages, add_generation_prompt, options);
}

Result<std::string> ChatTemplate::render_plain(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                               const jinja::RenderOptions& options) const {
  return render_with(*plain_, messages, add_generation_prompt, options, nullptr);
}

}  // namespace inferscope
