// libFuzzer target for the chat prompt assembly the app and `generate --chat` share: a file's
// template (fuzz_input.h) through ChatTemplate::for_chat, then build_chat_prompt over the
// conversation with a small context, on the stories260K and Phi-3 vocabularies. for_chat always
// gives a usable template; a prompt that is built leaves the reply its room in the context; one
// the file's template could not render is in the plain format.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/chat/chat_template.h"
#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "engine/chat/chat_prompt.h"
#include "engine/tokenizer/tokenizer.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace inferscope;
using inferscope::fuzz::fail;

constexpr const char* kVocabularies[] = {"stories260K.gguf", "llama.cpp-vocab/ggml-vocab-phi-3.gguf"};

std::vector<std::shared_ptr<const Tokenizer>>& tokenizers() {
  static std::vector<std::shared_ptr<const Tokenizer>> all;
  return all;
}

// A file with nothing but the template: for_chat reads only tokenizer.chat_template from it.
std::shared_ptr<const gguf::File> file_with_template(std::string_view source) {
  gguf::Writer writer;
  writer.add_string("tokenizer.chat_template", std::string(source));
  auto bytes = writer.write_to_memory();
  if (!bytes) fail("fuzz_chat_prompt", "cannot write the template file", bytes.message());
  auto file = gguf::File::parse(std::move(*bytes), "fuzz.gguf");
  if (!file) fail("fuzz_chat_prompt", "cannot read the template file", file.message());
  return *file;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  for (const char* relative : kVocabularies) {
    auto file = gguf::File::open(inferscope::fuzz::testdata(relative));
    if (!file) fail("fuzz_chat_prompt", "cannot open", file.message());
    auto tok = Tokenizer::from_gguf(**file);
    if (!tok) fail("fuzz_chat_prompt", "cannot load", tok.message());
    tokenizers().push_back(*tok);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t knobs = data[size - 1];  // the vocabulary, the context and the reply's room
  const auto input = inferscope::fuzz::split_template_input(std::string_view(reinterpret_cast<const char*>(data), size - 1));
  const Tokenizer& tok = *tokenizers()[knobs % tokenizers().size()];
  const int64_t n_ctx = int64_t(32) << ((knobs >> 1) % 5);
  const int32_t max_tokens = 1 + (knobs >> 4) * 8;

  auto tmpl = ChatTemplate::for_chat(*file_with_template(input.source), tok);
  if (!tmpl) fail("fuzz_chat_prompt", "for_chat failed on readable metadata", tmpl.message());
  if (!tmpl->fallback_reason().empty() && tmpl->has_template()) fail("fuzz_chat_prompt", "fell back but kept the template", "");

  std::vector<ChatMessage> messages;
  for (const auto& m : input.messages) messages.push_back({m.role, m.content});
  auto prompt = build_chat_prompt(tok, *tmpl, messages, n_ctx, max_tokens);
  if (!prompt) {
    if (prompt.message().empty()) fail("fuzz_chat_prompt", "error without a message", "");
    return 0;
  }
  const GenerateRequest& req = prompt->request;
  const auto n_prompt = static_cast<int64_t>(tok.encode(req.prompt, req.add_special, req.parse_special).size());
  if (n_prompt + std::min<int64_t>(max_tokens, n_ctx / 2) > n_ctx) {
    fail("fuzz_chat_prompt", "the prompt leaves the reply no room", std::to_string(n_prompt));
  }
  if (prompt->dropped_messages > messages.size()) fail("fuzz_chat_prompt", "dropped more messages than there were", "");
  const bool plain = !prompt->fallback_reason.empty() || !tmpl->has_template();
  if (plain && !req.prompt.ends_with("Assistant:")) fail("fuzz_chat_prompt", "a plain prompt without its cue", req.prompt);
  return 0;
}
