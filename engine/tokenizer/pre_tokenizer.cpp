// The pre-tokenizer regexes. They are the patterns of the models' tokenizer.json files, in the
// form llama.cpp uses them (case-insensitive groups spelled out). llama.cpp applies the list in
// order: each regex splits every piece the previous ones produced, and the text between matches
// is kept as pieces of its own.
#include "engine/tokenizer/pre_tokenizer.h"

#include <array>

#include "engine/tokenizer/unicode.h"

namespace inferscope::tok {
namespace {

// GPT-2's pattern, also the core of several others.
constexpr const char* kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
constexpr const char* kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kCjk = "[\u4E00-\u9FA5\u0800-\u4E00\uAC00-\uD7FF]+";
// DeepSeek LLM's letter class: Latin, Greek, Cyrillic, Armenian, Georgian, Cherokee, ... scripts
// with case, copied range by range from its tokenizer.json.
constexpr const char* kDeepseekLetters =
    "\\s?[A-Za-z\u00B5\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u01BA\u01BC-\u01BF\u01C4-\u0293\u0295-\u02AF"
    "\u0370-\u0373\u0376\u0377\u037B-\u037D\u037F\u0386\u0388-\u038A\u038C\u038E-\u03A1\u03A3-\u03F5"
    "\u03F7-\u0481\u048A-\u052F\u0531-\u0556\u10A0-\u10C5\u13A0-\u13F5\u13F8-\u13FD\u1C90-\u1CBA"
    "\u1CBD-\u1CBF\u1D00-\u1D2B\u1D6B-\u1D77\u1D79-\u1D9A\u1E00-\u1F15\u1F18-\u1F1D\u1F20-\u1F45"
    "\u1F48-\u1F4D\u1F50-\u1F57\u1F59\u1F5B\u1F5D\u1F5F-\u1F7D\u1F80-\u1FB4\u1FB6-\u1FBC\u1FBE"
    "\u1FC2-\u1FC4\u1FC6-\u1FCC\u1FD0-\u1FD3\u1FD6-\u1FDB\u1FE0-\u1FEC\u1FF2-\u1FF4\u1FF6-\u1FFC"
    "\u2102\u2107\u210A-\u2113\u2115\u2119-\u211D\u2124\u2126\u2128\u212A-\u212D\u212F-\u2134\u2139"
    "\u213C-\u213F\u2145-\u2149\u214E\u2183\u2184\u2C00-\u2C7B\u2C7E-\u2CE4\u2CEB-\u2CEE\u2CF2\u2CF3"
    "\uA640-\uA66D\uA680-\uA69B\uA722-\uA76F\uA771-\uA787\uA78B-\uA78E\uAB70-\uABBF\uFB00-\uFB06"
    "\uFB13-\uFB17\uFF21-\uFF3A\uFF41-\uFF5A\U00010400-\U0001044F\U000104B0-\U000104D3"
    "\U000104D8-\U000104FB\U00010C80-\U00010CB2\U00010CC0-\U00010CF2\U000118A0-\U000118DF"
    "\U0001E900-\U0001E943]+";
constexpr const char* kDeepseekPunct = "\\s?[!-/:-~\uFF01-\uFF0F\uFF1A-\uFF5E\u2018-\u201F\u3000-\u3002]+";
constexpr const char* kPoro = " ?[^(\\s|.,!?\u2026\u3002\uFF0C\u3001\u0964\u06D4\u060C)]+";
constexpr const char* kTekken =
    R"([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// o200k (GPT-4o, gpt-oss, Llama 4): tekken's case-run letters with the contractions kept on
// the word, digits in threes, '/' kept after punctuation.
constexpr const char* kGpt4o =
    R"([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

struct PreTokenizerSpec {
  std::vector<std::string_view> names;
  std::vector<const char*> regexes;
  PreTokenizerTraits traits;
};

const std::vector<PreTokenizerSpec>& specs() {
  static const std::vector<PreTokenizerSpec> table = {
      {{"default"},
       {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"},
       {}},
      {{"llama3", "llama-v3", "llama-bpe", "falcon3"}, {kLlama3}, {.add_bos = true, .ignore_merges = true}},
      {{"dbrx", "smaug-bpe"}, {kLlama3}, {}},
      {{"chatglm-bpe"}, {kLlama3}, {.clear_bos = true}},
      {{"deepseek-llm"},
       {"[\r\n]", kDeepseekLetters, kDeepseekPunct, R"(\s+$)", kCjk, R"(\p{N}+)"},
       {}},
      {{"deepseek-coder"}, {"[\r\n]", R"(\s?\p{L}+)", R"(\s?\p{P}+)", kCjk, R"(\p{N})"}, {}},
      {{"deepseek-v3"},
       {R"(\p{N}{1,3})", "[\u4E00-\u9FA5\u3040-\u309F\u30A0-\u30FF]+",
        R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
       {}},
      {{"falcon"}, {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, "[0-9][0-9][0-9]"}, {}},
      {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"},
       {R"(\p{N})", kGpt2},
       {}},
      {{"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v1-en", "jina-v2-es", "jina-v2-de",
        "jina-v2-code", "roberta-bpe", "mpt", "olmo", "jais"},
       {kGpt2},
       {}},
      {{"qwen2", "deepseek-r1-qwen", "megrez", "stablelm2"}, {kQwen2}, {}},
      {{"poro-chat", "bloom", "gpt3-finnish"}, {kPoro}, {}},
      {{"viking"}, {kPoro, R"(\p{N})"}, {}},
      {{"tekken"}, {kTekken}, {.add_bos = true, .ignore_merges = true}},
      {{"gpt-4o", "llama4", "kanana2", "talkie"}, {kGpt4o}, {}},
      {{"gemma4"}, {"[^\n]+|[\n]+"}, {.add_bos = true, .spm_style = true}},
      {{"chameleon"},
       {"<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", R"(\p{N})",
        R"([\p{P}!-/:-@\[-`{-~])", kGpt2},
       {.add_bos = true}},
  };
  return table;
}

const PreTokenizerSpec* find_spec(const std::string& name) {
  for (const PreTokenizerSpec& spec : specs()) {
    for (std::string_view n : spec.names) {
      if (n == name) return &spec;
    }
  }
  return nullptr;
}

}  // namespace

Result<PreTokenizerTraits> PreTokenizer::traits_for(const std::string& name) {
  const PreTokenizerSpec* spec = find_spec(name);
  if (!spec) return Result<PreTokenizerTraits>::error("unknown pre-tokenizer '" + name + "'");
  return spec->traits;
}

Result<PreTokenizer> PreTokenizer::create(const std::string& name) {
  const PreTokenizerSpec* spec = find_spec(name);
  if (!spec) return Result<PreTokenizer>::error("unknown pre-tokenizer '" + name + "'");
  PreTokenizer pre;
  pre.name_ = name;
  pre.traits_ = spec->traits;
  for (const char* pattern : spec->regexes) {
    Result<Regex> regex = Regex::compile(pattern);
    if (!regex) return regex.status();
    pre.regexes_.push_back(std::move(regex).value());
  }
  return pre;
}

std::vector<size_t> PreTokenizer::split_lengths(const std::vector<uint32_t>& cps) const {
  // llama.cpp hands std::regex a copy of the text in which non-ASCII whitespace reads as U+000B,
  // so that \s (ASCII-only there) still sees it; the regexes here match the same view.
  std::vector<uint32_t> view(cps);
  for (uint32_t& cp : view) {
    if (cp > 0x7F && is_whitespace(cp)) cp = 0x0B;
  }
  std::vector<size_t> lengths;
  if (!view.empty()) lengths.push_back(view.size());
  std::vector<size_t> next;
  for (const Regex& regex : regexes_) {
    next.clear();
    size_t start = 0;
    for (size_t length : lengths) {
      const uint32_t* piece = view.data() + start;
      size_t pos = 0, cursor = 0, begin = 0, end = 0;
      while (cursor < length && regex.search(piece, length, cursor, &begin, &end)) {
        if (end == begin) {  // an empty match cuts nothing
          cursor = begin + 1;
          continue;
        }
        if (begin > pos) next.push_back(begin - pos);
        next.push_back(end - begin);
        pos = cursor = end;
      }
      if (pos < length) next.push_back(length - pos);
      start += length;
    }
    lengths.swap(next);
  }
  return lengths;
}

void PreTokenizer::split(std::string_view text, std::vector<std::string>& words) const {
  const std::vector<uint32_t> cps = utf8_to_codepoints_by_pattern(text);
  size_t start = 0;
  std::string utf8;
  for (size_t length : split_lengths(cps)) {
    utf8.clear();
    for (size_t i = start; i < start + length; ++i) append_utf8(cps[i], utf8);
    words.push_back(traits_.spm_style ? utf8 : gpt2_byte_encode(utf8));
    start += length;
  }
}

std::vector<std::string> PreTokenizer::split_raw(std::string_view text) const {
  const std::vector<uint32_t> cps = utf8_to_codepoints_by_pattern(text);
  std::vector<std::string> words;
  size_t start = 0;
  for (size_t length : split_lengths(cps)) {
    std::string utf8;
    for (size_t i = start; i < start + length; ++i) append_utf8(cps[i], utf8);
    words.push_back(std::move(utf8));
    start += length;
  }
  return words;
}

}  // namespace inferscope::tok
