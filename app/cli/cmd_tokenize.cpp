// tokenize / detokenize: the model's tokenizer alone (no weights are touched).
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/tokenizer.h"

namespace inferscope::cli {

namespace {

// Opens only the tokenizer, so vocab-only GGUF files work too.
std::shared_ptr<const Tokenizer> load_tokenizer(Args& args) {
  const std::string path = args.string("model", default_model_path());
  auto file = gguf::File::open(path);
  if (!file) {
    std::fprintf(stderr, "error: %s\n", file.message().c_str());
    return nullptr;
  }
  auto tok = Tokenizer::from_gguf(**file);
  if (!tok) {
    std::fprintf(stderr, "error: %s\n", tok.message().c_str());
    return nullptr;
  }
  return *tok;
}

}  // namespace

int run_tokenize(int argc, char** argv) {
  Args args(argc, argv, "tokenize", "Prints the token ids of a text (llama.cpp's default: BOS as the model asks).",
            {kModelOption,
             {"text", "TEXT", "the text to tokenize"},
             {"no-special", nullptr, "do not add BOS/EOS"},
             {"parse-special", nullptr, "recognise special-token texts such as <s>"},
             {"pieces", nullptr, "print each id with its piece"},
             {"json", nullptr, "print a JSON array of ids"}});
  if (!args.ok()) return args.exit_code();
  if (!args.has("text")) {
    args.fail("--text is required");
    return args.exit_code();
  }
  auto tok = load_tokenizer(args);
  if (!tok) return 1;
  std::vector<int32_t> ids = tok->encode(args.string("text"), !args.flag("no-special"), args.flag("parse-special"));
  if (args.flag("json")) {
    std::printf("%s\n", nlohmann::json(ids).dump().c_str());
  } else if (args.flag("pieces")) {
    for (int32_t id : ids) std::printf("%6d -> '%s'\n", id, tok->token_to_piece(id).c_str());
  } else {
    for (size_t i = 0; i < ids.size(); ++i) std::printf(i ? " %d" : "%d", ids[i]);
    std::printf("\n");
  }
  return 0;
}

int run_detokenize(int argc, char** argv) {
  Args args(argc, argv, "detokenize", "Prints the text of token ids.",
            {kModelOption, {"ids", "IDS", "token ids separated by spaces or commas"}});
  if (!args.ok()) return args.exit_code();
  if (!args.has("ids")) {
    args.fail("--ids is required");
    return args.exit_code();
  }
  auto tok = load_tokenizer(args);
  if (!tok) return 1;
  std::string list = args.string("ids");
  for (char& c : list) c = (c == ',' || c == '[' || c == ']') ? ' ' : c;
  std::istringstream in(list);
  std::vector<int32_t> ids;
  std::string word;
  while (in >> word) {
    char* end = nullptr;
    long v = std::strtol(word.c_str(), &end, 10);
    if (*end != '\0' || !tok->is_valid(static_cast<int32_t>(v))) {
      std::fprintf(stderr, "error: '%s' is not a token id of this vocabulary (0..%d)\n", word.c_str(),
                   tok->n_vocab() - 1);
      return 1;
    }
    ids.push_back(static_cast<int32_t>(v));
  }
  std::string text = tok->decode(ids);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::printf("\n");
  return 0;
}

}  // namespace inferscope::cli
