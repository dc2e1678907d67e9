// llama.cpp's tokenizer test vectors (test-tokenizer-0): every X.gguf.inp / X.gguf.out pair in
// the shared test data whose vocabulary X.gguf sits beside it is one test case here, and the
// project's own (tests/data/vocab: vocabularies the shared data lacks, with hostile inputs after
// the standard 46; made as its README says).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/unicode.h"
#include "engine/tokenizer/wordpiece.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

namespace fs = std::filesystem;

struct VocabCase {
  std::string name;  // "gpt-2"
  std::string gguf;  // full path of ggml-vocab-<name>.gguf
};

// Test names in ctest/gtest output show the vocabulary, not the struct's bytes.
void PrintTo(const VocabCase& c, std::ostream* os) { *os << c.name; }

std::vector<VocabCase> discover_cases() {
  std::vector<VocabCase> cases;
  for (const std::string& folder_name : {testing::testdata("llama.cpp-vocab"), testing::testdata("derived"),
                                         std::string(INFERSCOPE_SOURCE_DIR) + "/tests/data/vocab"}) {
    const fs::path folder = folder_name;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
      const std::string file = entry.path().filename().string();
      const std::string suffix = ".gguf.inp";
      if (file.size() <= suffix.size() || file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0) {
        continue;
      }
      const fs::path gguf = folder / file.substr(0, file.size() - 4);  // drop ".inp"
      if (!fs::exists(gguf)) continue;
      std::string name = gguf.stem().string();  // ggml-vocab-gpt-2
      const std::string prefix = "ggml-vocab-";
      if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
      cases.push_back({name, gguf.string()});
    }
  }
  std::sort(cases.begin(), cases.end(), [](const VocabCase& a, const VocabCase& b) { return a.name < b.name; });
  return cases;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> split(const std::string& text, const std::string& separator) {
  std::vector<std::string> parts;
  size_t pos = 0;
  for (size_t hit; (hit = text.find(separator, pos)) != std::string::npos; pos = hit + separator.size()) {
    parts.push_back(text.substr(pos, hit - pos));
  }
  parts.push_back(text.substr(pos));
  return parts;
}

std::vector<int32_t> parse_ids(const std::string& line) {
  std::vector<int32_t> ids;
  std::istringstream in(line);
  for (long v; in >> v;) ids.push_back(static_cast<int32_t>(v));
  return ids;
}

void tok_append_utf8(uint32_t cp, std::string& out) {
  if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
  }
  out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
}

std::string show(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
  return s;
}

struct LoadedCase {
  std::shared_ptr<const Tokenizer> tokenizer;
  std::vector<std::string> inputs;
  std::vector<std::vector<int32_t>> expected;
};

LoadedCase load_case(const VocabCase& c) {
  LoadedCase loaded;
  auto file = gguf::File::open(c.gguf);
  EXPECT_TRUE(file.is_ok()) << file.message();
  if (!file) return loaded;
  auto tokenizer = Tokenizer::from_gguf(**file);
  EXPECT_TRUE(tokenizer.is_ok()) << tokenizer.message();
  if (!tokenizer) return loaded;
  loaded.tokenizer = *tokenizer;
  // The last input ends with the separator line, so the final split part is empty.
  loaded.inputs = split(read_file(c.gguf + ".inp"), "\n__ggml_vocab_test__\n");
  if (!loaded.inputs.empty() && loaded.inputs.back().empty()) loaded.inputs.pop_back();
  for (const std::string& line : split(read_file(c.gguf + ".out"), "\n")) loaded.expected.push_back(parse_ids(line));
  loaded.expected.resize(loaded.inputs.size());
  return loaded;
}

class TokenizerVectors : public ::testing::TestWithParam<VocabCase> {};

TEST_P(TokenizerVectors, MatchesLlamaCpp) {
  const LoadedCase c = load_case(GetParam());
  ASSERT_TRUE(c.tokenizer);
  ASSERT_GE(c.inputs.size(), 46u);
  int failures = 0;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const std::vector<int32_t> got = c.tokenizer->encode(c.inputs[i], /*add_special=*/false, /*parse_special=*/false);
    if (got != c.expected[i]) {
      ++failures;
      ADD_FAILURE() << "input " << i << " '" << c.inputs[i] << "'\n  expected: " << show(c.expected[i])
                    << "\n  got:      " << show(got);
    }
  }
  EXPECT_EQ(failures, 0);
}

// Byte-level BPE loses nothing: decoding the ids gives the input back. SentencePiece adds the
// prefix space (unless the vocabulary says not to, as Gemma 3's does). WordPiece gives the normalized words separated by spaces (unless a word
// became [UNK]). Invalid UTF-8 (the hostile inputs) comes back with U+FFFD, as in llama.cpp.
TEST_P(TokenizerVectors, DecodeRoundTrips) {
  const LoadedCase c = load_case(GetParam());
  ASSERT_TRUE(c.tokenizer);
  for (const std::string& input : c.inputs) {
    if (!tok::utf8_is_valid(input)) continue;
    // SentencePiece (and Gemma 4's BPE) stores a space as U+2581: a literal U+2581 comes back as a space.
    if (c.tokenizer->spaces_as_u2581() && input.find("\xE2\x96\x81") != std::string::npos) continue;
    const std::vector<int32_t> ids = c.tokenizer->encode(input, false, false);
    std::string expected = input;
    if (c.tokenizer->adds_space_prefix() && !input.empty()) expected = " " + input;
    if (c.tokenizer->kind() == TokenizerKind::WordPiece) {
      if (std::any_of(ids.begin(), ids.end(), [&](int32_t id) { return c.tokenizer->token_text(id) == "[UNK]"; })) {
        continue;
      }
      expected.clear();
      for (const std::string& word : tok::WordPieceModel::split_words(input)) {
        expected += (expected.empty() ? "" : " ") + word;
      }
    }
    EXPECT_EQ(c.tokenizer->decode(ids), expected) << "ids " << show(ids);
  }
}

// Random bytes, random code points and pieces of special-token syntax: every id produced is
// valid; byte-level BPE gives any valid UTF-8 back exactly, SentencePiece text without U+2581
// and special-token texts (which it cannot tell from a space / may strip around).
TEST_P(TokenizerVectors, SurvivesArbitraryInput) {
  const LoadedCase c = load_case(GetParam());
  ASSERT_TRUE(c.tokenizer);
  std::mt19937 rng(1234);
  const std::vector<std::string> snippets = {"<|endoftext|>", "<s>", "</s>", "[CLS]", "<|", "|>", "<0x41>",
                                             "\xE2\x96\x81", "\xC4\xA0", "  ", "\n", "'s", "##"};
  for (int round = 0; round < 300; ++round) {
    std::string text;
    bool valid_utf8 = true;
    bool plain = true;
    const int parts = static_cast<int>(rng() % 12);
    for (int p = 0; p < parts; ++p) {
      switch (rng() % 4) {
        case 0: text.push_back(static_cast<char>(0x20 + rng() % 95)); break;
        case 1: text.push_back(static_cast<char>(rng() % 256)); valid_utf8 = false; break;
        case 2: {
          uint32_t cp = 0x80 + rng() % 0x2FF80;
          if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xE9;
          tok_append_utf8(cp, text);
          break;
        }
        default:
          text += snippets[rng() % snippets.size()];
          plain = false;
          break;
      }
    }
    for (bool special : {false, true}) {
      const std::vector<int32_t> ids = c.tokenizer->encode(text, special, special);
      for (int32_t id : ids) ASSERT_TRUE(c.tokenizer->is_valid(id)) << id;
      const std::string decoded = c.tokenizer->decode(ids);
      const bool spm = c.tokenizer->kind() == TokenizerKind::SentencePiece;
      const bool u2581 = text.find("\xE2\x96\x81") != std::string::npos;
      const bool check = (c.tokenizer->kind() == TokenizerKind::BytePairEncoding && !(c.tokenizer->spaces_as_u2581() && u2581)) ||
                         (spm && plain && !u2581);
      if (!special && valid_utf8 && check) {
        const std::string expected = c.tokenizer->adds_space_prefix() && !text.empty() ? " " + text : text;
        EXPECT_EQ(decoded, expected) << "ids " << show(ids);
      }
    }
  }
}

std::string case_name(const ::testing::TestParamInfo<VocabCase>& info) {
  std::string name = info.param.name;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Vocab, TokenizerVectors, ::testing::ValuesIn(discover_cases()), case_name);

// Guards against the data folder going missing (which would silently leave zero cases above).
TEST(TokenizerVectorsDiscovery, FindsEveryVocabWithVectors) {
  std::vector<std::string> names;
  for (const VocabCase& c : discover_cases()) names.push_back(c.name);
  const std::vector<std::string> expected = {
      "bert-bge", "deepseek-coder", "deepseek-llm", "falcon",     "gemma3",    "gemma4-style", "gpt-2",
      "llama-bpe", "llama-bpe-2026", "llama-spm",   "mpt",        "o200k-harmony", "phi-3",
      "qwen2",    "qwen2-2026",     "refact",       "starcoder",  "tekken"};
  EXPECT_EQ(names, expected);
}

}  // namespace
}  // namespace inferscope
