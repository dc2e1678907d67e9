// The words of a prompt as the false-hit guard sees them: runs of letters and digits (UTF-8
// letters included), joined across inner . - / \ ' (file names, versions, paths, contractions)
// and followed by trailing + or # (C++, C#). Apostrophes are ASCII ('), "’" included.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace inferscope::semantic {

struct PromptWord {
  std::string text;     // as written
  std::string lower;    // ASCII-lowercased
  bool sentence_start;  // first word, or the first after . ! ? : or a line break
};

std::vector<PromptWord> split_prompt_words(std::string_view prompt);

// `lower` with a possessive ('s) and a simple plural removed: libraries -> library,
// boxes -> box, files -> file; words ending in ss, us, is stay (class, virus, analysis).
std::string singular_form(std::string_view lower);

}  // namespace inferscope::semantic
