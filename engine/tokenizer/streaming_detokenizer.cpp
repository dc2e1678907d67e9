// StreamingDetokenizer: buffers token bytes and releases the longest valid UTF-8 prefix.
#include "engine/tokenizer/streaming_detokenizer.h"

#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/unicode.h"

namespace inferscope {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// How many bytes at the end of `s` form the start of a UTF-8 sequence that more bytes could
// still complete (0 when the text ends on a boundary or the tail can never become valid).
size_t incomplete_tail(std::string_view s) {
  const size_t n = s.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto c = static_cast<uint8_t>(s[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    const int need = tok::utf8_sequence_length(c);
    if (need <= static_cast<int>(back)) return 0;
    // The bytes seen so far must be a valid beginning (no overlong / surrogate / > U+10FFFF).
    if (c == 0xC0 || c == 0xC1 || c > 0xF4) return 0;
    if (back >= 2) {
      const auto c1 = static_cast<uint8_t>(s[n - back + 1]);
      if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F) || (c == 0xF0 && c1 < 0x90) ||
          (c == 0xF4 && c1 > 0x8F)) {
        return 0;
      }
    }
    return back;
  }
  return 0;
}

// Copies valid UTF-8 through and replaces each invalid byte with U+FFFD.
void append_sanitized(std::string_view s, std::string& out) {
  for (size_t pos = 0; pos < s.size();) {
    uint32_t cp = 0;
    const size_t n = tok::utf8_decode(s, pos, &cp);
    if (cp == tok::kReplacementChar && n == 1) {
      out.append(kReplacement);
    } else {
      out.append(s.substr(pos, n));
    }
    pos += n;
  }
}

}  // namespace

StreamingDetokenizer::StreamingDetokenizer(const Tokenizer& tokenizer, ControlTokens control)
    : tokenizer_(tokenizer), control_(control) {}

std::string StreamingDetokenizer::push(int32_t id) {
  if (control_ == ControlTokens::Hidden && tokenizer_.is_hidden_in_generated_text(id)) return {};
  pending_ += tokenizer_.token_to_piece(id);
  const size_t hold = incomplete_tail(pending_);
  std::string out;
  append_sanitized(std::string_view(pending_).substr(0, pending_.size() - hold), out);
  pending_.erase(0, pending_.size() - hold);
  return out;
}

std::string StreamingDetokenizer::flush() {
  std::string out;
  append_sanitized(pending_, out);
  pending_.clear();
  return out;
}

}  // namespace inferscope
