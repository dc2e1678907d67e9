// A reply's reasoning apart from its answer, as the text streams in: models that think in
// <think> ... </think> before answering (Qwen3, SmolLM3, DeepSeek-R1 and its distills, QwQ).
// The format comes from the chat template (a template that writes <think> is such a model's);
// a prompt whose generation prompt already opened <think> (the thinking templates of
// DeepSeek-R1 and Qwen3-2507) starts the reply inside the reasoning.
// gpt-oss's harmony format writes each message as <|channel|>NAME<|message|>TEXT<|end|> (or
// <|return|> / <|call|> to end the reply), later ones after <|start|>assistant: the "analysis"
// channel is the reasoning, the others ("final", "commentary") the answer; the markers and the
// headers between them are neither. Its marker tokens print in generated text (the vocabulary
// makes them user-defined, as llama.cpp does).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace inferscope {

enum class ReasoningFormat { None, ThinkTags, Harmony };

// Harmony when the template text writes "<|channel|>", ThinkTags when it writes "<think>", else
// None.
ReasoningFormat reasoning_format_of(std::string_view chat_template);

struct ReasoningSegment {
  std::string text;
  bool reasoning = false;
};

class ReasoningSplitter {
 public:
  // prompt: the rendered prompt the reply continues (its tail may have opened the reasoning).
  ReasoningSplitter(ReasoningFormat format, std::string_view prompt);

  // The next piece of the reply: the segments it completes, in order. A tag split across
  // pieces is held back until it is whole (or turns out not to be a tag).
  std::vector<ReasoningSegment> push(std::string_view text);
  // What is held back, at the end of the reply.
  std::vector<ReasoningSegment> flush();

  bool in_reasoning() const { return in_reasoning_; }

 private:
  void append(std::vector<ReasoningSegment>& out, std::string text) const;
  std::vector<ReasoningSegment> push_harmony(std::string_view text);
  void harmony_marker(std::string_view marker);
  void harmony_text(std::vector<ReasoningSegment>& out, std::string_view text);

  // Where a harmony reply is: a message's text (in_reasoning_ says which channel), the header
  // before it (role, recipient, channel name: not shown), or between messages (nothing shown).
  // Text before any marker is the answer (a model that does not speak harmony).
  enum class HarmonyPart { Text, Header, Between };
  HarmonyPart harmony_ = HarmonyPart::Text;
  std::string header_;  // the header so far: its channel name decides the message's kind
  bool marked_ = false;  // a harmony marker came: held header text was no answer

  ReasoningFormat format_;
  bool in_reasoning_ = false;
  bool answered_ = false;  // the answer has begun: a later <think> is text
  bool trim_answer_start_ = false;  // the reasoning just closed: drop the whitespace after it
  std::string pending_;    // a possible tag's start
};

}  // namespace inferscope
