// The false-hit guard: a lexical second opinion on a cached prompt whose embedding is close
// enough to the new one. Sentence embeddings put "how do I enable X" and "how do I disable X"
// almost on top of each other; these rules catch what the vectors blur. Applied in order, the
// first that finds a difference rejects the candidate and says why:
//
//  1. negation: the two prompts hold a different number of negations (not, no, never, none,
//     nothing, nobody, nowhere, neither, nor, without, cannot, every "...n't" contraction and
//     its apostrophe-less spelling: dont, cant, ...). "can't" and "cannot" count the same.
//  2. opposite meaning: on one axis of guard_lexicon.cpp (enable/disable, turn on/turn off,
//     add/remove, increase/decrease, install/uninstall, start/stop, open/close, allow/deny/block,
//     before/after, min/max, true/false, on/off, light/dark, ...), one prompt has only words of
//     one side and the other only words of the other side. Inflections count (enabled, stopping).
//  3. numbers: the multisets of numbers differ: digit runs (with inner dots: 3.11, 1.2.3) and
//     number words, which count as their digits ("three" = "3"; zero..twenty, tens, hundred,
//     thousand, million, billion).
//  4. names: a name in one prompt does not occur in the other (case-insensitive, possessive and
//     plural s ignored). Names are capitalized words not at a sentence start (France, Docker,
//     GPU; not "I") and words with digits, underscores or inner dots, slashes (config.yaml,
//     v1.2, my_var, src/main.cpp).
//  5. content words: a word that is not a stop word, not an intent-neutral phrasing word (way,
//     best, explain, make, ...), not a negation or number, occurs in one prompt and not in the
//     other (compared lowercased, possessive and plural s removed: "cats" = "cat"), unless it is
//     an axis word whose side the other prompt also has ("enable" is covered by "turn on").
//
// What it cannot see: word order ("convert Celsius to Fahrenheit" / "Fahrenheit to Celsius"),
// and meaning carried by words it treats as neutral. docs/SEMANTIC-CACHE.md has the full rule
// and how to measure it on one's own prompts (cache audit).
#pragma once

#include <string>
#include <string_view>

namespace inferscope::semantic {

struct GuardVerdict {
  bool accepted = true;
  std::string reason;  // empty when accepted: "negation differs: 'not' vs none", ...
};

class FalseHitGuard {
 public:
  explicit FalseHitGuard(bool enabled = true) : enabled_(enabled) {}

  // Whether a reply cached for `cached_prompt` may answer `new_prompt`. Symmetric. A disabled
  // guard accepts everything.
  GuardVerdict check(std::string_view cached_prompt, std::string_view new_prompt) const;

  bool enabled() const { return enabled_; }
  void set_enabled(bool enabled) { enabled_ = enabled; }

 private:
  bool enabled_;
};

}  // namespace inferscope::semantic
