#include "engine/chat/reasoning_split.h"

#include <algorithm>

namespace inferscope {

namespace {

constexpr std::string_view kOpen = "<think>";
constexpr std::string_view kClose = "</think>";

// The longest suffix of `text` that begins `tag` (a tag that may continue in the next piece).
size_t partial_tag_suffix(std::string_view text, std::string_view tag) {
  for (size_t n = std::min(text.size(), tag.size() - 1); n > 0; --n) {
    if (text.substr(text.size() - n) == tag.substr(0, n)) return n;
  }
  return 0;
}

std::string_view trim_end(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

ReasoningFormat reasoning_format_of(std::string_view chat_template) {
  return chat_template.find(kOpen) != std::string_view::npos ? ReasoningFormat::ThinkTags : ReasoningFormat::None;
}

ReasoningSplitter::ReasoningSplitter(ReasoningFormat format, std::string_view prompt) : format_(format) {
  if (format_ != ReasoningFormat::ThinkTags) return;
  const std::string_view tail = trim_end(prompt);
  in_reasoning_ = tail.size() >= kOpen.size() && tail.substr(tail.size() - kOpen.size()) == kOpen;
}

void ReasoningSplitter::append(std::vector<ReasoningSegment>& out, std::string text) const {
  if (text.empty()) return;
  if (!out.empty() && out.back().reasoning == in_reasoning_) {
    out.back().text += text;
  } else {
    out.push_back({std::move(text), in_reasoning_});
  }
}

std::vector<ReasoningSegment> ReasoningSplitter::push(std::string_view piece) {
  std::vector<ReasoningSegment> out;
  std::string text = pending_ + std::string(piece);
  pending_.clear();
  size_t at = 0;
  while (at < text.size()) {
    if (format_ == ReasoningFormat::None || answered_) {
      // The blank lines templates put between the reasoning and the answer are neither.
      if (trim_answer_start_) {
        at = std::min(text.size(), text.find_first_not_of(" \t\r\n", at));
        if (at == text.size()) return out;
        trim_answer_start_ = false;
      }
      append(out, text.substr(at));
      return out;
    }
    // Inside the reasoning the close tag ends it; before any answer an open tag starts it, and
    // only whitespace may come before that tag (anything else is the answer itself).
    const std::string_view tag = in_reasoning_ ? kClose : kOpen;
    const std::string_view rest = std::string_view(text).substr(at);
    const size_t found = rest.find(tag);
    const size_t before_len = found == std::string_view::npos ? rest.size() - partial_tag_suffix(rest, tag) : found;
    const std::string_view before = rest.substr(0, before_len);
    if (!in_reasoning_ && before.find_first_not_of(" \t\r\n") != std::string_view::npos) {
      answered_ = true;
      continue;
    }
    if (found == std::string_view::npos) {
      if (in_reasoning_) {
        append(out, std::string(before));
        pending_ = std::string(rest.substr(before_len));
      } else {
        pending_ = std::string(rest);  // whitespace, perhaps the start of <think>
      }
      return out;
    }
    if (in_reasoning_) append(out, std::string(before));
    at += found + tag.size();
    if (in_reasoning_) {
      in_reasoning_ = false;
      answered_ = true;
      trim_answer_start_ = true;
    } else {
      in_reasoning_ = true;
    }
  }
  return out;
}

std::vector<ReasoningSegment> ReasoningSplitter::flush() {
  std::vector<ReasoningSegment> out;
  if (pending_.find_first_not_of(" \t\r\n") != std::string::npos || in_reasoning_) append(out, std::move(pending_));
  pending_.clear();
  return out;
}

}  // namespace inferscope
