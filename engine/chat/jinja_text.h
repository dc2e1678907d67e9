// Text helpers of the Jinja interpreter: UTF-8 characters (Python counts characters, not
// bytes), Python's whitespace set, and substring search in linear time (templates from model
// files may search a 4 MiB string for a 2 MiB one; a naive search would take hours).
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "engine/chat/jinja_budget.h"

namespace inferscope::jinja {

// Byte length of the UTF-8 character starting at s[pos] (a lead byte plus its continuation bytes).
size_t char_length_at(std::string_view s, size_t pos);
// Start of the UTF-8 character that ends at s[end - 1]; end > 0.
size_t char_start_before(std::string_view s, size_t end);
// Characters in `s` (continuation bytes not counted).
size_t utf8_length(std::string_view s);
// Byte offset of every character, then s.size(): character i is [offsets[i], offsets[i + 1]).
// Charges its bytes to `budget`.
std::vector<size_t> char_offsets(std::string_view s, Budget& budget);

// Python's str.isspace() for one UTF-8 character: the ASCII whitespace plus \x1c-\x1f, NEL,
// NBSP, U+1680, U+2000-U+200A, U+2028/9, U+202F, U+205F and U+3000 (ideographic space).
bool is_python_space(std::string_view ch);

// The first occurrence of `needle` in `haystack` at or after `from`, or npos; O(haystack +
// needle) time, charged to `budget`. An empty needle is found at `from` (when from <= size).
size_t find_text(std::string_view haystack, std::string_view needle, size_t from, Budget& budget);

}  // namespace inferscope::jinja
