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

struct ChatMessage {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

enum class ChatFamily { ChatML, Llama2, Llama3, Mistral, Phi3, Gemma, Zephyr, DeepSeek, Other, None };

const char* chat_family_name(ChatFamily family);  // "chatml", "llama2", ..., "other", "none"
// Recognizes the family from the markers a template writes; None for an empty template.
ChatFamily detect_chat_family(std::string_view template_source);

class ChatTemplate {
 public:
  // Template text from tokenizer.chat_template (the plain format when absent), BOS/EOS texts
  // from the tokenizer, and the stop tokens. A template that does not parse is an error.
  static Result<ChatTemplate> from_gguf(const gguf::File& file, const Tokenizer& tokenizer);
  // A template text (empty: the plain format) for a model with this tokenizer.
  static Result<ChatTemplate> from_tokenizer(std::string source, const Tokenizer& tokenizer);
  // An empty source selects the plain format. No stop tokens (there is no vocabulary).
  static Result<ChatTemplate> from_source(std::string source, std::string bos_token, std::string eos_token);

  // The prompt text for `messages` (special tokens as text: tokenize it with parse_special).
  // Errors from the template (raise_exception, unsupported syntax at run time) are returned.
  Result<std::string> render(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                             const jinja::RenderOptions& options = {}) const;

  // Whether the tokenizer should add its own BOS to a rendered prompt: templates usually write
  // BOS themselves, and a second one would change what the model sees.
  bool tokenizer_adds_bos(std::string_view rendered) const {
    return bos_token_.empty() || !rendered.starts_with(bos_token_);
  }

  ChatFamily family() const { return family_; }
  bool has_template() const { return has_template_; }  // false: the plain format
  const std::string& source() const { return source_; }
  const std::string& bos_token() const { return bos_token_; }
  // The vocabulary's end-of-generation tokens (EOS, EOT, ...) plus the end-of-turn markers the
  // template writes (<|im_end|>, <|eot_id|>, <end_of_turn>, <|end|>, ...), ascending.
  const std::vector<int32_t>& stop_token_ids() const { return stop_token_ids_; }

 private:
  ChatTemplate() = default;

  std::string source_;
  bool has_template_ = false;
  ChatFamily family_ = ChatFamily::None;
  std::string bos_token_;
  std::string eos_token_;
  std::shared_ptr<const jinja::Template> template_;
  std::vector<int32_t> stop_token_ids_;
};

}  // namespace inferscope
