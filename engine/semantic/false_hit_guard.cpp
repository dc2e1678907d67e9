#include "engine/semantic/false_hit_guard.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <unordered_set>
#include <utility>
#include <vector>

#include "engine/semantic/guard_lexicon.h"
#include "engine/semantic/prompt_words.h"

namespace inferscope::semantic {
namespace {

namespace lex = guard_lexicon;

using Pole = std::pair<std::size_t, bool>;  // (axis, positive)

struct PoleMention {
  Pole pole;
  std::string text;  // the word or phrase as written
};

// Everything the rules compare, read once per prompt.
struct PromptFeatures {
  std::vector<PromptWord> words;
  std::vector<std::vector<Pole>> poles_of_word;  // [words]: the word's own and its phrases' poles
  std::vector<PoleMention> pole_mentions;
  std::set<Pole> poles;
  std::unordered_set<std::string> forms;  // singular_form of every word
};

bool has_digit(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

void add_poles(PromptFeatures& f, std::size_t first_word, std::size_t n_words, std::string_view key,
               const std::string& text) {
  for (const lex::AxisPole& p : lex::axis_poles(key)) {
    const Pole pole{p.axis, p.positive};
    f.pole_mentions.push_back(PoleMention{pole, text});
    f.poles.insert(pole);
    for (std::size_t w = first_word; w < first_word + n_words; ++w) f.poles_of_word[w].push_back(pole);
  }
}

PromptFeatures read_features(std::string_view prompt) {
  PromptFeatures f;
  f.words = split_prompt_words(prompt);
  f.poles_of_word.resize(f.words.size());
  for (std::size_t i = 0; i < f.words.size(); ++i) {
    const PromptWord& word = f.words[i];
    f.forms.insert(singular_form(word.lower));
    add_poles(f, i, 1, word.lower, word.text);
    if (i + 1 < f.words.size()) {
      add_poles(f, i, 2, word.lower + " " + f.words[i + 1].lower, word.text + " " + f.words[i + 1].text);
    }
  }
  return f;
}

std::string quoted_list(const std::vector<std::string>& items) {
  if (items.empty()) return "none";
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "'" : ", '") + item + "'";
  return text;
}

// "<what> differs: 'x' vs 'y'", naming what only the cached prompt has, then the new one.
std::string difference(std::string_view what, const std::vector<std::string>& only_cached,
                       const std::vector<std::string>& only_new) {
  return std::string(what) + " differs: " + quoted_list(only_cached) + " vs " + quoted_list(only_new);
}

// The items of `a` not matched one-to-one in `b`, in a's order.
std::vector<std::string> multiset_minus(const std::vector<std::string>& a, std::vector<std::string> b) {
  std::vector<std::string> rest;
  for (const std::string& item : a) {
    auto found = std::find(b.begin(), b.end(), item);
    if (found == b.end()) {
      rest.push_back(item);
    } else {
      b.erase(found);
    }
  }
  return rest;
}

// Rule 1.
std::vector<std::string> negations(const PromptFeatures& f) {
  std::vector<std::string> found;
  for (const PromptWord& w : f.words) {
    if (lex::is_negation(w.lower)) found.push_back(w.text);
  }
  return found;
}

std::optional<std::string> negation_difference(const PromptFeatures& a, const PromptFeatures& b) {
  const std::vector<std::string> in_a = negations(a), in_b = negations(b);
  if (in_a.size() == in_b.size()) return std::nullopt;
  return difference("negation", in_a, in_b);
}

// Rule 2.
bool only_side(const PromptFeatures& f, std::size_t axis, bool positive) {
  return f.poles.count({axis, positive}) != 0 && f.poles.count({axis, !positive}) == 0;
}

std::string first_mention(const PromptFeatures& f, Pole pole) {
  for (const PoleMention& m : f.pole_mentions) {
    if (m.pole == pole) return m.text;
  }
  return {};
}

std::optional<std::string> opposite_meaning(const PromptFeatures& a, const PromptFeatures& b) {
  for (const Pole& pole : a.poles) {
    const auto [axis, positive] = pole;
    if (only_side(a, axis, positive) && only_side(b, axis, !positive)) {
      return "opposite meaning: '" + first_mention(a, pole) + "' vs '" + first_mention(b, {axis, !positive}) + "'";
    }
  }
  return std::nullopt;
}

// Rule 3: "v1.2.3" -> "1.2.3", "3.11" -> "3.11", "three" -> "3".
void append_digit_runs(std::string_view word, std::vector<std::string>& numbers) {
  auto digit = [&](std::size_t i) { return i < word.size() && std::isdigit(static_cast<unsigned char>(word[i])); };
  for (std::size_t i = 0; i < word.size();) {
    if (!digit(i)) {
      ++i;
      continue;
    }
    const std::size_t start = i;
    while (digit(i) || (word[i] == '.' && digit(i + 1))) ++i;
    numbers.emplace_back(word.substr(start, i - start));
  }
}

std::vector<std::string> numbers(const PromptFeatures& f) {
  std::vector<std::string> found;
  for (const PromptWord& w : f.words) {
    const std::string_view value = lex::number_word_value(w.lower);
    if (!value.empty()) {
      found.emplace_back(value);
    } else {
      append_digit_runs(w.lower, found);
    }
  }
  return found;
}

std::optional<std::string> number_difference(const PromptFeatures& a, const PromptFeatures& b) {
  const std::vector<std::string> in_a = numbers(a), in_b = numbers(b);
  std::vector<std::string> only_a = multiset_minus(in_a, in_b), only_b = multiset_minus(in_b, in_a);
  if (only_a.empty() && only_b.empty()) return std::nullopt;
  return difference("number", only_a, only_b);
}

// Rule 4.
bool is_stop(const PromptWord& w) { return lex::is_stop_word(w.lower) || lex::is_stop_word(singular_form(w.lower)); }

// config.yaml, v1.2, my_var, src/main.cpp; a bare number (3.11) is rule 3's.
bool looks_like_identifier(const PromptWord& w) {
  const bool has_letter =
      std::any_of(w.lower.begin(), w.lower.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; });
  return has_letter && (w.lower.find_first_of("_./\\") != std::string::npos || has_digit(w.lower));
}

bool is_name(const PromptWord& w) {
  if (is_stop(w)) return false;
  const bool capitalized = std::isupper(static_cast<unsigned char>(w.text[0])) != 0;
  const bool pronoun_i = w.lower == "i" || w.lower.rfind("i'", 0) == 0;
  return (capitalized && !w.sentence_start && !pronoun_i) || looks_like_identifier(w);
}

std::vector<std::string> names_missing_from(const PromptFeatures& f, const PromptFeatures& other) {
  std::vector<std::string> missing;
  for (const PromptWord& w : f.words) {
    if (is_name(w) && other.forms.count(singular_form(w.lower)) == 0) missing.push_back(w.text);
  }
  return missing;
}

std::optional<std::string> name_difference(const PromptFeatures& a, const PromptFeatures& b) {
  std::vector<std::string> only_a = names_missing_from(a, b), only_b = names_missing_from(b, a);
  if (only_a.empty() && only_b.empty()) return std::nullopt;
  return difference("name", only_a, only_b);
}

// Rule 5.
bool carries_content(const PromptWord& w) {
  return !is_stop(w) && !lex::is_neutral_word(w.lower) && !lex::is_negation(w.lower) &&
         lex::number_word_value(w.lower).empty() && !has_digit(w.lower);
}

std::vector<std::string> content_missing_from(const PromptFeatures& f, const PromptFeatures& other) {
  std::vector<std::string> missing;
  for (std::size_t i = 0; i < f.words.size(); ++i) {
    const PromptWord& w = f.words[i];
    if (!carries_content(w) || other.forms.count(singular_form(w.lower)) != 0) continue;
    const std::vector<Pole>& poles = f.poles_of_word[i];
    const bool side_covered = std::any_of(poles.begin(), poles.end(), [&](const Pole& p) { return other.poles.count(p) != 0; });
    if (!side_covered) missing.push_back(w.text);
  }
  return missing;
}

std::optional<std::string> content_difference(const PromptFeatures& a, const PromptFeatures& b) {
  std::vector<std::string> only_a = content_missing_from(a, b), only_b = content_missing_from(b, a);
  if (only_a.empty() && only_b.empty()) return std::nullopt;
  return difference("content word", only_a, only_b);
}

}  // namespace

GuardVerdict FalseHitGuard::check(std::string_view cached_prompt, std::string_view new_prompt) const {
  if (!enabled_) return GuardVerdict{};
  const PromptFeatures cached = read_features(cached_prompt), fresh = read_features(new_prompt);
  for (auto rule : {negation_difference, opposite_meaning, number_difference, name_difference, content_difference}) {
    if (std::optional<std::string> reason = rule(cached, fresh)) return GuardVerdict{false, std::move(*reason)};
  }
  return GuardVerdict{};
}

}  // namespace inferscope::semantic
