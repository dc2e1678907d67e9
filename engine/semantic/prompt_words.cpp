#include "engine/semantic/prompt_words.h"

#include <cctype>

namespace inferscope::semantic {
namespace {

bool is_word_byte(unsigned char c) { return std::isalnum(c) != 0 || c == '_' || c >= 0x80; }
bool is_joiner(char c) { return c == '.' || c == '-' || c == '/' || c == '\\' || c == '\''; }
bool ends_sentence(char c) { return c == '.' || c == '!' || c == '?' || c == ':' || c == '\n'; }
bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// The typographic apostrophe (U+2019) as ASCII, so "don’t" and "don't" are the same word.
std::string with_ascii_apostrophes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.substr(i, 3) == "\xE2\x80\x99") {
      out += '\'';
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string ascii_lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

// Length of the word starting at text[start] (a word byte).
std::size_t word_length(std::string_view text, std::size_t start) {
  std::size_t end = start;
  for (;;) {
    while (end < text.size() && is_word_byte(static_cast<unsigned char>(text[end]))) ++end;
    const bool joined = end + 1 < text.size() && is_joiner(text[end]) &&
                        is_word_byte(static_cast<unsigned char>(text[end + 1]));
    if (!joined) break;
    ++end;
  }
  while (end < text.size() && (text[end] == '+' || text[end] == '#')) ++end;
  return end - start;
}

}  // namespace

std::vector<PromptWord> split_prompt_words(std::string_view prompt) {
  const std::string text = with_ascii_apostrophes(prompt);
  std::vector<PromptWord> words;
  bool sentence_start = true;
  for (std::size_t i = 0; i < text.size();) {
    if (!is_word_byte(static_cast<unsigned char>(text[i]))) {
      if (ends_sentence(text[i])) sentence_start = true;
      ++i;
      continue;
    }
    const std::size_t n = word_length(text, i);
    const std::string_view word = std::string_view(text).substr(i, n);
    words.push_back(PromptWord{std::string(word), ascii_lower(word), sentence_start});
    sentence_start = false;
    i += n;
  }
  return words;
}

std::string singular_form(std::string_view lower) {
  if (ends_with(lower, "'s")) lower.remove_suffix(2);
  if (lower.size() <= 3 || lower.back() != 's') return std::string(lower);
  if (ends_with(lower, "ss") || ends_with(lower, "us") || ends_with(lower, "is")) return std::string(lower);
  if (ends_with(lower, "ies")) return std::string(lower.substr(0, lower.size() - 3)) + "y";
  for (std::string_view es : {"xes", "ches", "shes", "sses"}) {
    if (ends_with(lower, es)) return std::string(lower.substr(0, lower.size() - 2));
  }
  return std::string(lower.substr(0, lower.size() - 1));
}

}  // namespace inferscope::semantic
