// A reply's reasoning apart from its answer, as the text streams in: models that think in
// <think> ... </think> before answering (Qwen3, SmolLM3, DeepSeek-R1 and its distills, QwQ).
// The format comes from the chat template (a template that writes <think> is such a model's);
// a prompt whose generation prompt already opened <think> (the thinking templates of
// DeepSeek-R1 and Qwen3-2507) starts the reply inside the reasoning.
// Not handled yet: gpt-oss's harmony channels (<|channel|>analysis ... <|end|>), whose markers
// are control tokens the detokenizer does not print.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace inferscope {

enum class ReasoningFormat { None, ThinkTags };

// ThinkTags when the template text writes "<think>", else None.
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

  ReasoningFormat format_;
  bool in_reasoning_ = false;
  bool answered_ = false;  // the answer has begun: a later <think> is text
  bool trim_answer_start_ = false;  // the reasoning just closed: drop the whitespace after it
  std::string pending_;    // a possible tag's start
};

}  // namespace inferscope
