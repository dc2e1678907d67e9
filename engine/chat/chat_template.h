// A model's chat format: its own Jinja template (GGUF `tokenizer.chat_template`) rendered by
// the interpreter in this folder, so every file renders exactly as its authors wrote it. The
// family label (chatml, llama3, ...) is only for display; files without a template get a plain
// "User: ... / Assistant:" format. Also knows the tokens that end an assistant turn.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/chat/jinja_interpreter.h"
#include "engine/core/status.h"

namespace inferscope {

namespace gguf {
class File;
}
class Tokenizer;

// A call an assistant message makes (OpenAI's tool_calls entry).
struct ChatToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // the arguments object as JSON text (templates see the object)
};

struct ChatMessage {
  std::string role;  // "system", "user", "assistant", "tool"
  std::string content;
  std::vector<ChatToolCall> tool_calls = {};  // an assistant's calls, if any
  std::string tool_call_id = {};              // a "tool" message: the call it answers
};

enum class ChatFamily { ChatML, Llama2, Llama3, Mistral, Phi3, Gemma, Zephyr, DeepSeek, Other, None };

const char* chat_family_name(ChatFamily family);  // "chatml", "llama2", ..., "other", "none"
// Recognizes the family from the markers a template writes; None for an empty template.
ChatFamily detect_chat_family(std::string_view template_source);

// Longer template sources are refused (real ones are under 20 KB).
constexpr size_t kMaxChatTemplateBytes = size_t(1) << 20;

class ChatTemplate {
 public:
  // Template text from tokenizer.chat_template (the plain format when absent), BOS/EOS texts
  // from the tokenizer, and the stop tokens. A template that does not parse is an error.
  static Result<ChatTemplate> from_gguf(const gguf::File& file, const Tokenizer& tokenizer);
  // What a chat front end uses: the file's template when it parses and renders a short
  // conversation, else the plain format with fallback_reason() saying what stopped the file's
  // template (a limit, unsupported syntax, an error it raised). Fails only on unreadable metadata.
  static Result<ChatTemplate> for_chat(const gguf::File& file, const Tokenizer& tokenizer);
  // A template text (empty: the plain format) for a model with this tokenizer.
  static Result<ChatTemplate> from_tokenizer(std::string source, const Tokenizer& tokenizer);
  // An empty source selects the plain format. No stop tokens (there is no vocabulary).
  static Result<ChatTemplate> from_source(std::string source, std::string bos_token, std::string eos_token);

  // The prompt text for `messages` (special tokens as text: tokenize it with parse_special).
  // Errors from the template (raise_exception, unsupported syntax at run time) are returned;
  // `stopped_by` says which limit stopped it, if one did.
  Result<std::string> render(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                             const jinja::RenderOptions& options = {}, jinja::Limit* stopped_by = nullptr) const;
  // render(), but when a limit stops the file's template, the plain format's prompt, with
  // `*fallback_reason` set to the limit's message (else cleared). Other errors are returned.
  Result<std::string> render_or_plain(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                      std::string* fallback_reason, const jinja::RenderOptions& options = {}) const;
  // The plain format's prompt, whatever the file's template.
  Result<std::string> render_plain(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                   const jinja::RenderOptions& options = {}) const;

  // Whether the tokenizer should add its own BOS to a rendered prompt: templates usually write
  // BOS themselves, and a second one would change what the model sees.
  bool tokenizer_adds_bos(std::string_view rendered) const {
    return bos_token_.empty() || !rendered.starts_with(bos_token_);
  }

  ChatFamily family() const { return family_; }
  bool has_template() const { return has_template_; }  // false: the plain format
  // Why for_chat() chose the plain format over the file's template ("" when it did not).
  const std::string& fallback_reason() const { return fallback_reason_; }
  const std::string& source() const { return source_; }
  const std::string& bos_token() const { return bos_token_; }
  // The vocabulary's end-of-generation tokens (EOS, EOT, ...) plus the end-of-turn markers the
  // template writes (<|im_end|>, <|eot_id|>, <end_of_turn>, <|end|>, ...), ascending.
  const std::vector<int32_t>& stop_token_ids() const { return stop_token_ids_; }

 private:
  ChatTemplate() = default;
  Result<std::string> render_with(const jinja::Template& tmpl, const std::vector<ChatMessage>& messages,
                                  bool add_generation_prompt, const jinja::RenderOptions& options,
                                  jinja::Limit* stopped_by) const;

  std::string source_;
  bool has_template_ = false;
  ChatFamily family_ = ChatFamily::None;
  std::string bos_token_;
  std::string eos_token_;
  std::string fallback_reason_;
  std::shared_ptr<const jinja::Template> template_;
  std::shared_ptr<const jinja::Template> plain_;  // the fallback when the file's template stops at a limit
  std::vector<int32_t> stop_token_ids_;
};

}  // namespace inferscope
