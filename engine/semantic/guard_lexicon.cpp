#include "engine/semantic/guard_lexicon.h"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace inferscope::semantic::guard_lexicon {
namespace {

constexpr std::string_view kStopWords[] = {
    "a", "an", "the", "i", "me", "my", "mine", "myself", "you", "your", "yours", "yourself", "we", "us", "our",
    "ours", "he", "him", "his", "she", "her", "hers", "it", "its", "itself", "they", "them", "their", "theirs",
    "this", "that", "these", "those", "who", "whom", "whose", "which", "what", "when", "where", "why", "how",
    "whether", "is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "doing", "have",
    "has", "had", "having", "can", "could", "would", "should", "will", "shall", "may", "might", "must", "of",
    "in", "to", "for", "with", "at", "by", "from", "about", "into", "onto", "as", "and", "or", "but", "if",
    "then", "than", "so", "such", "there", "here", "also", "just", "very", "really", "too", "please", "some",
    "any", "each", "every", "all", "both", "either", "own", "same", "other", "another", "again", "via", "per",
    "like", "hey", "hi", "hello", "thanks", "thank", "okay", "ok", "etc", "e.g", "i.e", "let", "lets",
    "i'm", "i've", "i'd", "i'll", "you're", "you've", "you'd", "you'll", "we're", "we've", "they're",
    "they've", "it'll", "that'll", "one's",
    // Short words that are also on an axis below: the axis rule still sees them, but alone they
    // are too common ("install it on Linux") to make two prompts differ in content.
    "on", "off", "up", "down", "out", "before", "after", "more", "most", "less", "least", "under", "above",
    "below", "back", "next", "yes"};

constexpr std::string_view kNeutralWords[] = {
    "way", "best", "easy", "simple", "quick", "proper", "correct", "good", "possible", "actual", "exact",
    "basic", "general", "usual", "typical", "normal", "current", "ideal", "recommended", "recommend",
    "suggest", "advice", "step", "guide", "tutorial", "method", "approach", "procedure", "instruction",
    "explain", "explanation", "describe", "description", "tell", "say", "help", "need", "want", "wish",
    "know", "learn", "understand", "make", "get", "got", "use", "usage", "turn", "put", "take", "give",
    "go", "work", "happen", "mean", "meaning", "define", "definition", "example", "instance", "thing",
    "stuff", "kind", "type", "difference", "differ", "different", "compare", "comparison", "versus", "vs",
    "between", "question", "answer", "idea", "someone", "something", "anything", "everything", "somebody",
    "anyone", "everyone", "much", "many", "lot", "bit", "little", "find", "figure", "try", "able",
    "achieve", "accomplish", "perform", "implement", "manner", "brief", "short", "anybody",
    "main", "common", "specific", "actually", "exactly", "basically", "probably", "maybe", "perhaps"};

constexpr std::string_view kNegations[] = {
    "not",   "no",     "never",  "none",    "nothing", "nobody",   "nowhere",  "neither", "nor",
    "without", "cannot", "dont", "doesnt",  "didnt",   "isnt",     "arent",    "wasnt",   "werent",
    "cant",  "couldnt", "wouldnt", "shouldnt", "wont",  "hasnt",    "havent",   "hadnt",   "aint",
    "mustnt", "neednt"};

struct NumberWord {
  std::string_view word, digits;
};
constexpr NumberWord kNumberWords[] = {
    {"zero", "0"},      {"one", "1"},        {"two", "2"},         {"three", "3"},       {"four", "4"},
    {"five", "5"},      {"six", "6"},        {"seven", "7"},       {"eight", "8"},       {"nine", "9"},
    {"ten", "10"},      {"eleven", "11"},    {"twelve", "12"},     {"thirteen", "13"},   {"fourteen", "14"},
    {"fifteen", "15"},  {"sixteen", "16"},   {"seventeen", "17"},  {"eighteen", "18"},   {"nineteen", "19"},
    {"twenty", "20"},   {"thirty", "30"},    {"forty", "40"},      {"fifty", "50"},      {"sixty", "60"},
    {"seventy", "70"},  {"eighty", "80"},    {"ninety", "90"},     {"hundred", "100"},   {"thousand", "1000"},
    {"million", "1000000"}, {"billion", "1000000000"}};

// One axis of opposite meaning: words (or two-word phrases) on its positive and negative side.
struct Axis {
  std::vector<std::string_view> positive, negative;
};

const std::vector<Axis>& axes() {
  static const std::vector<Axis> list = {
      {{"enable", "activate", "turn on", "switch on", "unmute"},
       {"disable", "deactivate", "turn off", "switch off", "shut off", "mute"}},
      {{"on"}, {"off"}},
      {{"add", "insert", "append", "include", "attach"}, {"remove", "delete", "drop", "erase", "exclude", "detach"}},
      {{"create"}, {"delete", "destroy"}},
      {{"install"}, {"uninstall"}},
      {{"increase", "raise", "grow", "expand", "enlarge", "boost", "extend", "maximize", "more", "high", "big",
        "large", "up"},
       {"decrease", "reduce", "lower", "shrink", "shorten", "minimize", "less", "fewer", "low", "small", "down"}},
      {{"start", "begin", "launch", "resume"}, {"stop", "end", "halt", "pause", "kill", "terminate", "quit", "exit", "finish"}},
      {{"open"}, {"close", "shut"}},
      {{"allow", "permit", "accept", "grant", "approve", "whitelist", "unblock"},
       {"deny", "block", "forbid", "reject", "refuse", "prevent", "ban", "blacklist"}},
      {{"before", "prior", "earlier", "previous"}, {"after", "later", "next"}},
      {{"min", "minimum", "minimal", "least"}, {"max", "maximum", "maximal", "most"}},
      {{"true", "yes"}, {"false"}},
      {{"show", "display", "unhide", "reveal"}, {"hide", "conceal"}},
      {{"lock"}, {"unlock"}},
      {{"encrypt"}, {"decrypt"}},
      {{"encode"}, {"decode"}},
      {{"compress", "zip"}, {"decompress", "unzip", "extract"}},
      {{"serialize"}, {"deserialize"}},
      {{"import"}, {"export"}},
      {{"upload"}, {"download"}},
      {{"push"}, {"pull"}},
      {{"connect"}, {"disconnect"}},
      {{"mount"}, {"unmount"}},
      {{"load"}, {"unload", "save"}},
      {{"read"}, {"write"}},
      {{"subscribe", "follow"}, {"unsubscribe", "unfollow"}},
      {{"pin"}, {"unpin"}},
      {{"freeze"}, {"unfreeze"}},
      {{"login", "log in", "sign in"}, {"logout", "log out", "sign out"}},
      {{"buy", "purchase"}, {"sell"}},
      {{"win"}, {"lose"}},
      {{"first"}, {"last"}},
      {{"above", "upper"}, {"below", "under", "beneath"}},
      {{"ascending", "ascend"}, {"descending", "descend"}},
      {{"positive"}, {"negative"}},
      {{"input"}, {"output"}},
      {{"left"}, {"right"}},
      {{"light", "bright"}, {"dark"}},
      {{"fast", "quick", "rapid"}, {"slow"}},
      {{"hot", "warm"}, {"cold", "cool"}},
      {{"best", "good"}, {"worst", "bad"}},
      {{"new", "latest", "modern"}, {"old", "outdated", "legacy"}},
      {{"uppercase", "capitalize"}, {"lowercase"}},
      {{"succeed", "success", "pass"}, {"fail", "failure"}},
      {{"plus", "multiply"}, {"minus", "divide"}},
      {{"forward"}, {"backward", "back"}},
      {{"inside", "internal"}, {"outside", "external"}},
      {{"north"}, {"south"}},
      {{"east"}, {"west"}},
      {{"male", "man", "boy"}, {"female", "woman", "girl"}},
      {{"always"}, {"never", "rarely"}},
      {{"public"}, {"private"}},
      {{"online"}, {"offline"}},
      {{"visible"}, {"invisible", "hidden"}},
      {{"valid"}, {"invalid"}},
      {{"legal"}, {"illegal"}},
      {{"safe"}, {"unsafe", "dangerous"}},
      {{"possible"}, {"impossible"}},
  };
  return list;
}

bool is_vowel(char c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; }

// A base word and the forms English builds from it with the usual suffixes; over-generating a
// form nobody writes ("addded") is harmless, it never matches.
std::vector<std::string> inflections(std::string_view word) {
  const std::string base(word);
  std::vector<std::string> forms = {base, base + "s", base + "es", base + "ed", base + "ing", base + "er",
                                    base + "est", base + "ly"};
  const char last = base.back();
  if (last == 'e') {
    const std::string stem = base.substr(0, base.size() - 1);
    for (const char* suffix : {"d", "r", "st"}) forms.push_back(base + suffix);
    for (const char* suffix : {"ing", "ly"}) forms.push_back(stem + suffix);
    if (base.size() > 2 && base[base.size() - 2] == 'l') forms.push_back(stem + "y");  // simple -> simply
  } else if (last == 'y' && base.size() > 1 && !is_vowel(base[base.size() - 2])) {
    const std::string stem = base.substr(0, base.size() - 1);
    for (const char* suffix : {"ies", "ied", "ier", "iest", "ily"}) forms.push_back(stem + suffix);
  } else if (!is_vowel(last) && last != 'w' && last != 'x' && last != 'y') {
    for (const char* suffix : {"ed", "ing", "er", "est"}) forms.push_back(base + last + suffix);  // stop -> stopped
  }
  return forms;
}

// "turn off" -> "turn off", "turned off", "turning off", ...
std::vector<std::string> phrase_inflections(std::string_view phrase) {
  const std::size_t space = phrase.find(' ');
  if (space == std::string_view::npos) return inflections(phrase);
  std::vector<std::string> forms;
  for (const std::string& head : inflections(phrase.substr(0, space))) {
    forms.push_back(head + std::string(phrase.substr(space)));
  }
  return forms;
}

struct Tables {
  std::unordered_set<std::string_view> stop_words{std::begin(kStopWords), std::end(kStopWords)};
  std::unordered_set<std::string_view> negations{std::begin(kNegations), std::end(kNegations)};
  std::unordered_set<std::string> neutral_forms;
  std::unordered_map<std::string, std::vector<AxisPole>> poles_of_form;

  Tables() {
    for (std::string_view word : kNeutralWords) {
      for (std::string& form : inflections(word)) neutral_forms.insert(std::move(form));
    }
    for (std::size_t axis = 0; axis < axes().size(); ++axis) {
      add_poles(axes()[axis].positive, AxisPole{axis, true});
      add_poles(axes()[axis].negative, AxisPole{axis, false});
    }
  }

  void add_poles(const std::vector<std::string_view>& words, AxisPole pole) {
    for (std::string_view word : words) {
      for (std::string& form : phrase_inflections(word)) {
        std::vector<AxisPole>& poles = poles_of_form[std::move(form)];
        bool known = false;
        for (const AxisPole& p : poles) known = known || (p.axis == pole.axis && p.positive == pole.positive);
        if (!known) poles.push_back(pole);
      }
    }
  }
};

const Tables& tables() {
  static const Tables instance;
  return instance;
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

}  // namespace

bool is_stop_word(std::string_view lower) { return tables().stop_words.count(lower) != 0; }

bool is_neutral_word(std::string_view lower) { return tables().neutral_forms.count(std::string(lower)) != 0; }

bool is_negation(std::string_view lower) { return tables().negations.count(lower) != 0 || ends_with(lower, "n't"); }

std::string_view number_word_value(std::string_view lower) {
  for (const NumberWord& n : kNumberWords) {
    if (n.word == lower) return n.digits;
  }
  return {};
}

std::span<const AxisPole> axis_poles(std::string_view lower_word_or_phrase) {
  const auto& poles = tables().poles_of_form;
  auto found = poles.find(std::string(lower_word_or_phrase));
  if (found == poles.end()) return {};
  return found->second;
}

}  // namespace inferscope::semantic::guard_lexicon
