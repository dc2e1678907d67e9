#include "engine/chat/reasoning_split.h"

#include <algorithm>

namespace inferscope {

namespace {

constexpr std::string_view kOpen = "<think>";
constexpr std::string_view kClose = "</think>";
constexpr std::string_view kHarmonyMarkers[] = {"<|start|>", "<|channel|>", "<|message|>", "<|constrain|>",
                                                "<|end|>", "<|return|>", "<|call|>"};

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

// The channel a harmony header names: the word after "<|channel|>" in it ("analysis", "final",
// "commentary"); "" when it names none.
std::string_view harmony_channel(std::string_view header) {
  const size_t at = header.rfind("<|channel|>");
  if (at == std::string_view::npos) return {};
  std::string_view rest = header.substr(at + std::string_view("<|channel|>").size());
  const size_t end = rest.find_first_of(" <");
  return rest.substr(0, end);
}

}  // namespace

ReasoningFormat reasoning_format_of(std::string_view chat_template) {
  if (chat_template.find("<|channel|>") != std::string_view::npos) return ReasoningFormat::Harmony;
  return chat_template.find(kOpen) != std::string_view::npos ? ReasoningFormat::ThinkTags : ReasoningFormat::None;
}

ReasoningSplitter::ReasoningSplitter(ReasoningFormat format, std::string_view prompt) : format_(format) {
  if (format_ == ReasoningFormat::Harmony) {
    // A generation prompt ending in "<|start|>assistant" leaves the header to the model; one
    // that ends in "...<|channel|>NAME<|message|>" has opened that channel's message.
    const size_t start = prompt.rfind("<|start|>");
    const std::string_view tail = start == std::string_view::npos ? std::string_view() : prompt.substr(start);
    constexpr std::string_view kMessage = "<|message|>";
    if (tail.size() >= kMessage.size() && tail.substr(tail.size() - kMessage.size()) == kMessage) {
      in_reasoning_ = harmony_channel(tail) == "analysis";
    } else if (!tail.empty() && tail.find("<|end|>") == std::string_view::npos) {
      harmony_ = HarmonyPart::Header;
    }
    return;
  }
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

// Where a marker leads: into a header (<|start|>, <|channel|>), into a message's text
// (<|message|>: its channel decides which side), between messages (<|end|>, <|return|>,
// <|call|>). <|constrain|> stays in the header.
void ReasoningSplitter::harmony_marker(std::string_view marker) {
  marked_ = true;
  if (marker == "<|start|>") {
    harmony_ = HarmonyPart::Header;
    header_.clear();
  } else if (marker == "<|channel|>") {
    if (harmony_ != HarmonyPart::Header) header_.clear();
    harmony_ = HarmonyPart::Header;
    header_ += marker;
  } else if (marker == "<|message|>") {
    in_reasoning_ = harmony_channel(header_) == "analysis";
    harmony_ = HarmonyPart::Text;
    header_.clear();
  } else if (marker == "<|constrain|>") {
    if (harmony_ == HarmonyPart::Header) header_ += marker;
  } else {
    harmony_ = HarmonyPart::Between;
    in_reasoning_ = false;
  }
}

void ReasoningSplitter::harmony_text(std::vector<ReasoningSegment>& out, std::string_view text) {
  if (harmony_ == HarmonyPart::Text) append(out, std::string(text));
  if (harmony_ == HarmonyPart::Header) header_ += text;
}

std::vector<ReasoningSegment> ReasoningSplitter::push_harmony(std::string_view piece) {
  std::vector<ReasoningSegment> out;
  const std::string text = pending_ + std::string(piece);
  pending_.clear();
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t at = std::string_view::npos;
    std::string_view marker;
    for (std::string_view m : kHarmonyMarkers) {
      const size_t found = rest.find(m);
      if (found < at) {
        at = found;
        marker = m;
      }
    }
    if (at == std::string_view::npos) {
      // Hold back what may be a marker's start ("<|" and on).
      size_t held = 0;
      for (std::string_view m : kHarmonyMarkers) held = std::max(held, partial_tag_suffix(rest, m));
      harmony_text(out, rest.substr(0, rest.size() - held));
      pending_ = std::string(rest.substr(rest.size() - held));
      return out;
    }
    harmony_text(out, rest.substr(0, at));
    harmony_marker(marker);
    rest.remove_prefix(at + marker.size());
  }
  return out;
}

std::vector<ReasoningSegment> ReasoningSplitter::push(std::string_view piece) {
  if (format_ == ReasoningFormat::Harmony) return push_harmony(piece);
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
  if (format_ == ReasoningFormat::Harmony) {
    // A reply in no harmony message at all (no marker came): what was held as a header is the
    // answer; a held marker start is text of the part it came in.
    if (marked_) {
      harmony_text(out, pending_);
    } else {
      append(out, header_ + pending_);
    }
    header_.clear();
    pending_.clear();
    return out;
  }
  if (pending_.find_first_not_of(" \t\r\n") != std::string::npos || in_reasoning_) append(out, std::move(pending_));
  pending_.clear();
  return out;
}

}  // namespace inferscope
