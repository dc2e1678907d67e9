// A small backtracking regular-expression matcher over Unicode code points, for the
// pre-tokenizer patterns that llama.cpp and Hugging Face tokenizers use. std::regex cannot
// match \p{L} and friends; this supports exactly the subset those patterns need:
//   alternation |, groups ( ) (?: ), lookahead (?= ) (?! ), quantifiers ? * + {n} {n,} {n,m}
//   (greedy), classes [...] [^...] with ranges, . ^ $, escapes \s \S \d \D \w \W \r \n \t \f \v,
//   \p{X} / \P{X} for L N P S M Z C and Lu Ll Lt Lm Lo Nd.
// Semantics are ECMAScript's (leftmost alternative wins, greedy with backtracking), which is
// what llama.cpp gets from std::regex. \s and \d are ASCII-only as in std::regex: callers map
// non-ASCII whitespace to U+000B first, as llama.cpp does (see pre_tokenizer.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/status.h"

namespace inferscope::tok {

class Regex {
 public:
  // Parses `pattern` (UTF-8). Errors name the position and problem.
  static Result<Regex> compile(std::string_view pattern);

  // Leftmost match in subject[from, length); the subject's end is the end of input for $ and
  // lookahead. On success sets [*begin, *end) (code point indices) and returns true.
  bool search(const uint32_t* subject, size_t length, size_t from, size_t* begin, size_t* end) const;

  const std::string& pattern() const { return pattern_; }

 private:
  enum class Op : uint8_t { kClass, kClassRepeat, kSplit, kJump, kAssertBegin, kAssertEnd, kLook, kMatch };
  struct Inst {
    Op op = Op::kMatch;
    bool negate = false;  // kLook: (?! ) instead of (?= )
    int32_t x = 0;        // kClass/kClassRepeat: class index; kSplit: preferred target; kJump/kLook: target
    int32_t y = 0;        // kSplit: alternative target; kClassRepeat: minimum count
    int32_t z = 0;        // kClassRepeat: maximum count
  };
  struct ClassItem {
    enum Kind : uint8_t { kRange, kCategory, kNotCategory, kSpace, kNotSpace, kDigit, kNotDigit, kWord, kNotWord };
    Kind kind = kRange;
    uint32_t lo = 0, hi = 0;  // kRange: inclusive; kCategory/kNotCategory: lo = CategoryBit mask
  };
  struct CharClass {
    std::vector<ClassItem> items;
    bool negate = false;
    uint64_t ascii[2] = {0, 0};  // precomputed result for code points below 128
    bool matches(uint32_t cp) const;
    bool matches_slow(uint32_t cp) const;
  };
  friend class RegexParser;
  friend class RegexCompiler;

  // A backtracking point: resume at `pc` with `pos`. For a greedy run of one class
  // (kClassRepeat) one frame stands for all shorter lengths down to `low`.
  struct Frame {
    int32_t pc;
    bool run;
    size_t pos;
    size_t low;
  };
  // Runs the program from `pc` at `pos`; on a match stores its end in *end (may be null).
  bool run(int32_t pc, const uint32_t* subject, size_t length, size_t pos, size_t* end,
           std::vector<Frame>& stack) const;

  std::string pattern_;
  std::vector<Inst> program_;
  std::vector<CharClass> classes_;
};

}  // namespace inferscope::tok
