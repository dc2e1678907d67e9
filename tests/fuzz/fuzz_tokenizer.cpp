// libFuzzer target for the tokenizers: arbitrary bytes through encode for each tokenizer kind
// and pre-tokenizer of the shared vocabularies (SentencePiece, byte-level BPE, WordPiece).
// Input: byte 0 picks the vocabulary, byte 1 the flags (bit 0 add_special, bit 1
// parse_special), the rest is the text. Every id must be valid; decode and token_to_piece must
// agree; the streaming detokenizer must give decode's text; and, for valid UTF-8 without special
// tokens parsed, decode(encode(text)) gives the text back (SentencePiece: up to the spaces it
// inserts) on the vocabularies that have a token for every byte (llama.cpp drops bytes a
// vocabulary lacks).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/streaming_detokenizer.h"
#include "engine/tokenizer/tokenizer.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using inferscope::StreamingDetokenizer;
using inferscope::Tokenizer;
using inferscope::TokenizerKind;
using inferscope::fuzz::fail;

// One vocabulary per tokenizer kind and BPE pre-tokenizer the shared test data has.
constexpr const char* kVocabularies[] = {
    "llama.cpp-vocab/ggml-vocab-llama-spm.gguf",  "llama.cpp-vocab/ggml-vocab-phi-3.gguf",
    "llama.cpp-vocab/ggml-vocab-baichuan.gguf",   "llama.cpp-vocab/ggml-vocab-gpt-2.gguf",
    "llama.cpp-vocab/ggml-vocab-deepseek-llm.gguf", "llama.cpp-vocab/ggml-vocab-deepseek-coder.gguf",
    "llama.cpp-vocab/ggml-vocab-falcon.gguf",     "llama.cpp-vocab/ggml-vocab-mpt.gguf",
    "llama.cpp-vocab/ggml-vocab-starcoder.gguf",  "llama.cpp-vocab/ggml-vocab-refact.gguf",
    "llama.cpp-vocab/ggml-vocab-gpt-neox.gguf",   "llama.cpp-vocab/ggml-vocab-bert-bge.gguf",
};

struct Loaded {
  std::shared_ptr<const Tokenizer> tokenizer;
  bool every_byte = false;  // every byte value valid UTF-8 can hold round-trips
};

std::vector<Loaded>& tokenizers() {
  static std::vector<Loaded> all;
  return all;
}

// The shortest valid UTF-8 character holding byte `b`; "" for bytes UTF-8 never uses.
std::string character_with_byte(int b) {
  const std::string byte(1, static_cast<char>(b));
  if (b < 0x80) return byte;
  if (b < 0xC0) return "\xC2" + byte;
  if (b < 0xC2 || b > 0xF4) return "";
  if (b < 0xE0) return byte + "\x80";
  if (b == 0xE0) return "\xE0\xA0\x80";
  if (b < 0xF0) return byte + "\x80\x80";
  if (b == 0xF0) return "\xF0\x90\x80\x80";
  return byte + "\x80\x80\x80";
}

// Whether the vocabulary has a token (or byte fallback) for every byte: then any valid UTF-8
// text must round-trip through encode and decode.
bool round_trips_every_byte(const Tokenizer& tok) {
  for (int b = 0; b < 256; ++b) {
    const std::string text = character_with_byte(b);
    if (text.empty()) continue;
    std::string decoded = tok.decode(tok.encode(text, false, false));
    if (tok.kind() == TokenizerKind::SentencePiece && decoded.size() == text.size() + 1 && decoded[0] == ' ') decoded.erase(0, 1);
    if (decoded != text) return false;
  }
  return true;
}

std::string ids_text(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += std::to_string(id) + " ";
  return s;
}

std::string without_spaces(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
  return s;
}

// Byte-level BPE gives the text back exactly. SentencePiece inserts spaces (the prefix space,
// and one after a user-defined token that cuts the text, as llama.cpp does), so there the text
// must come back up to spaces.
void check_round_trip(const Tokenizer& tok, const std::string& text, const std::vector<int32_t>& ids,
                      const std::string& decoded) {
  if (tok.kind() == TokenizerKind::WordPiece || !inferscope::fuzz::is_valid_utf8(text)) return;
  bool same = decoded == text;
  if (tok.kind() == TokenizerKind::SentencePiece) {
    if (text.find("\xE2\x96\x81") != std::string::npos) return;  // U+2581 is SentencePiece's space
    same = without_spaces(decoded) == without_spaces(text);
  }
  if (!same) fail("fuzz_tokenizer", "decode(encode(text)) differs", tok.model_name() + "/" + tok.pre_name() + " ids " + ids_text(ids));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  for (const char* relative : kVocabularies) {
    auto file = inferscope::gguf::File::open(inferscope::fuzz::testdata(relative));
    if (!file) fail("fuzz_tokenizer", "cannot open", file.message());
    auto tok = Tokenizer::from_gguf(**file);
    if (!tok) fail("fuzz_tokenizer", "cannot load", tok.message());
    tokenizers().push_back({*tok, round_trips_every_byte(**tok)});
    std::fprintf(stderr, "fuzz_tokenizer: %s (%s/%s)%s\n", relative, (*tok)->model_name().c_str(), (*tok)->pre_name().c_str(),
                 tokenizers().back().every_byte ? ", every byte round-trips" : "");
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const Loaded& loaded = tokenizers()[data[0] % tokenizers().size()];
  const Tokenizer& tok = *loaded.tokenizer;
  const bool add_special = data[1] & 1;
  const bool parse_special = data[1] & 2;
  const std::string text(reinterpret_cast<const char*>(data + 2), size - 2);

  const std::vector<int32_t> ids = tok.encode(text, add_special, parse_special);
  for (int32_t id : ids) {
    if (!tok.is_valid(id)) fail("fuzz_tokenizer", "invalid id", std::to_string(id));
  }
  const std::string decoded = tok.decode(ids);
  if (tok.kind() != TokenizerKind::WordPiece) {
    std::string pieces;
    for (int32_t id : ids) pieces += tok.token_to_piece(id);
    if (pieces != decoded) fail("fuzz_tokenizer", "decode differs from the concatenated pieces", ids_text(ids));
    StreamingDetokenizer stream(tok);
    std::string streamed;
    for (int32_t id : ids) streamed += stream.push(id);
    streamed += stream.flush();
    if (inferscope::fuzz::is_valid_utf8(decoded) && streamed != decoded) {
      fail("fuzz_tokenizer", "streamed text differs from decode", ids_text(ids));
    }
  }
  if (loaded.every_byte && !add_special && !parse_special) check_round_trip(tok, text, ids, decoded);
  return 0;
}
