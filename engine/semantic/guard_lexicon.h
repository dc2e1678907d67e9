// The word lists of the false-hit guard (false_hit_guard.h): stop words, intent-neutral phrasing
// words, negations, number words, and the axes of opposite meaning (enable/disable, add/remove,
// ...). Words are matched lowercased; the neutral and axis lists also match common inflections
// (enable -> enables, enabled, enabling; stop -> stopped; big -> bigger; easy -> easily).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace inferscope::semantic::guard_lexicon {

// Function words that carry no topic: articles, pronouns, auxiliaries, prepositions, question
// words ("how", "i'm", ...), and short particles that are also axis words (on, off, up, ...).
bool is_stop_word(std::string_view lower);

// Words that change how a request is phrased, not what it asks: "way", "best", "explain",
// "make", "use", "turn", "step", ... Specific actions (copy, move, rename) are not in this list,
// so two prompts that differ in one of those still differ for the guard.
bool is_neutral_word(std::string_view lower);

// not, no, never, none, nothing, nobody, nowhere, neither, nor, without, cannot, any "...n't"
// contraction, and the same contractions typed without the apostrophe (dont, cant, ...).
bool is_negation(std::string_view lower);

// The digits of a number word ("three" -> "3", "twenty" -> "20", "hundred" -> "100"; zero to
// twenty, the tens, hundred, thousand, million, billion); empty for any other word.
std::string_view number_word_value(std::string_view lower);

struct AxisPole {
  std::size_t axis;  // which axis: poles compare only within one
  bool positive;     // enable, add, increase, ... (false: disable, remove, decrease, ...)
};
// The poles a word or a two-word phrase ("turn off", "log in") stands for; empty for most.
std::span<const AxisPole> axis_poles(std::string_view lower_word_or_phrase);

}  // namespace inferscope::semantic::guard_lexicon
