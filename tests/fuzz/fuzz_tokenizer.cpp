// libFuzzer target for the tokenizers: arbitrary bytes through encode for each tokenizer kind
// and pre-tokenizer of the shared vocabularies (SentencePiece, byte-level BPE, WordPiece).
// Input: byte 0 picks the vocabulary, byte 1 the flags (bit 0 add_special, bit 1
// parse_special), the rest is the text. Every id must be valid; decode and token_to_piece must
// agree; the streaming detokenizer must give decode's text; and, for valid UTF-8 without special
// tokens parsed, decode(encode(text)) gives the text back (SentencePiece: after its prefix space).
#include <cstdint>
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

std::vector<std::shared_ptr<const Tokenizer>>& tokenizers() {
  static std::vector<std::shared_ptr<const Tokenizer>> all;
  return all;
}

std::string ids_text(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += std::to_string(id) + " ";
  return s;
}

void check_round_trip(const Tokenizer& tok, const std::string& text, const std::vector<int32_t>& ids,
                      const std::string& decoded) {
  if (tok.kind() == TokenizerKind::WordPiece || !inferscope::fuzz::is_valid_utf8(text)) return;
  std::string expected = text;
  if (tok.kind() == TokenizerKind::SentencePiece) {
    if (text.find("\xE2\x96\x81") != std::string::npos) return;  // U+2581 is SentencePiece's space
    if (decoded.size() == text.size() + 1 && decoded[0] == ' ') expected = " " + text;
  }
  if (decoded != expected) fail("fuzz_tokenizer", "decode(encode(text)) differs", tok.model_name() + "/" + tok.pre_name() + " ids " + ids_text(ids));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  for (const char* relative : kVocabularies) {
    auto file = inferscope::gguf::File::open(inferscope::fuzz::testdata(relative));
    if (!file) fail("fuzz_tokenizer", "cannot open", file.message());
    auto tok = Tokenizer::from_gguf(**file);
    if (!tok) fail("fuzz_tokenizer", "cannot load", tok.message());
    tokenizers().push_back(*tok);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const Tokenizer& tok = *tokenizers()[data[0] % tokenizers().size()];
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
  if (!add_special && !parse_special) check_round_trip(tok, text, ids, decoded);
  return 0;
}
