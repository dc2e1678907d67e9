// `generate --chat` and the chat template line of `inspect`, through the real binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "engine/gguf/gguf_file.h"
#include "tests/support/chat_models.h"
#include "tests/support/cli_runner.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"
#include "tests/support/tokenizers.h"

namespace inferscope {
namespace {

using testing::CliRun;
using testing::quoted;
using testing::run_cli;

TEST(CliChat, GenerateChatUsesThePlainFormatWithoutATemplate) {
  const std::string model = testing::testdata("stories260K.gguf");
  CliRun r = run_cli("generate --model '" + model +
                              "' --chat --system 'Be brief.' --prompt 'Tell a story' --temperature 0 --max-tokens 8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // stories260K has no tokenizer.chat_template: the plain transcript, BOS added by the tokenizer.
  auto tok = testing::load_tokenizer("stories260K.gguf");
  ASSERT_TRUE(tok);
  const std::vector<int32_t> expected = tok->encode("Be brief.\n\nUser: Tell a story\nAssistant:", true, true);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(expected.front(), tok->bos_id());
  EXPECT_EQ(j["prompt_token_ids"].get<std::vector<int32_t>>(), expected);
  const std::string reason = j["stop_reason"];
  EXPECT_TRUE(reason == "max_tokens" || reason == "eos") << reason;
}

TEST(CliChat, GenerateChatUsesTheFilesTemplateWithOneBos) {
  // A random-weight model with Phi-3's vocabulary, whose metadata carries Phi-3-mini's template
  // (which drops system messages and writes BOS itself).
  const std::string model = (testing::scratch_dir("cli-chat-phi3") / "phi3-chat.gguf").string();
  CliRun made = run_cli("make-model --vocab '" + testing::testdata("llama.cpp-vocab/ggml-vocab-phi-3.gguf") +
                                 "' --output '" + model + "' --embd 64 --layers 1 --heads 2 --ff 128 --context 256");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  CliRun r = run_cli("generate --model '" + model +
                              "' --chat --system 'Be brief.' --prompt 'Hi' --temperature 0 --max-tokens 4 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // The file's own tokenizer: llama.cpp's per-model token attributes depend on general.name.
  auto file = gguf::File::open(model);
  ASSERT_TRUE(file.is_ok()) << file.message();
  auto tok = Tokenizer::from_gguf(**file);
  ASSERT_TRUE(tok.is_ok()) << tok.message();
  const std::vector<int32_t> expected = (*tok)->encode("<s><|user|>\nHi<|end|>\n<|assistant|>\n", false, true);
  const auto ids = j["prompt_token_ids"].get<std::vector<int32_t>>();
  EXPECT_EQ(ids, expected);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids[0], 1);  // <s>, once: the template wrote it, so the tokenizer adds none
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 1), 1);
}

// A file whose chat template runs away still chats: the CLI names the limit that stopped the
// template and sends the prompt in the plain format.
TEST(CliChat, AHostileTemplateFallsBackToThePlainFormat) {
  const auto dir = testing::scratch_dir("cli-chat-hostile");
  auto tok = testing::load_tokenizer("stories260K.gguf");
  ASSERT_TRUE(tok);
  const std::vector<int32_t> plain = tok->encode("User: Hi\nAssistant:", true, true);
  for (const testing::HostileTemplate& t : testing::hostile_templates()) {
    const std::string model = (dir / (std::string(t.name) + ".gguf")).string();
    const Status written = testing::write_with_chat_template(testing::testdata("stories260K.gguf"), t.source, model);
    ASSERT_TRUE(written) << written.message();
    CliRun r = run_cli("generate --model '" + model + "' --chat --prompt Hi --temperature 0 --max-tokens 2 --json");
    ASSERT_EQ(r.exit_code, 0) << t.name << ": " << r.err;
    EXPECT_NE(r.err.find("chat template is not used"), std::string::npos) << t.name << ": " << r.err;
    EXPECT_NE(r.err.find(t.stops_with), std::string::npos) << t.name << ": " << r.err;
    EXPECT_NE(r.err.find("plain \"User: ... / Assistant:\" format"), std::string::npos) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["prompt_token_ids"].get<std::vector<int32_t>>(), plain) << t.name;
  }
}

// A template that passes the check at load time but runs away on the conversation it is given.
TEST(CliChat, ATemplateThatRunsAwayOnThePromptFallsBackToo) {
  const std::string model = (testing::scratch_dir("cli-chat-late-bomb") / "late.gguf").string();
  const std::string bomb = "{% if messages | length == 1 %}{{ 'x' * 1000000000 }}{% endif %}"
                           "{% for m in messages %}{{ m.content }}{% endfor %}";
  ASSERT_TRUE(testing::write_with_chat_template(testing::testdata("stories260K.gguf"), bomb, model));
  CliRun r = run_cli("generate --model '" + model + "' --chat --prompt Hi --temperature 0 --max-tokens 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("output exceeds its limit"), std::string::npos) << r.err;
  auto tok = testing::load_tokenizer("stories260K.gguf");
  ASSERT_TRUE(tok);
  EXPECT_EQ(nlohmann::json::parse(r.out)["prompt_token_ids"].get<std::vector<int32_t>>(),
            tok->encode("User: Hi\nAssistant:", true, true));
}

TEST(CliChat, SystemWithoutChatIsAUsageError) {
  CliRun r = run_cli("generate --system 'x' --max-tokens 1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--system needs --chat"), std::string::npos) << r.err;
}

TEST(CliChat, InspectShowsTheTemplateFamily) {
  CliRun none = run_cli("inspect --json --model '" + testing::testdata("stories260K.gguf") + "'");
  ASSERT_EQ(none.exit_code, 0) << none.err;
  const auto j = nlohmann::json::parse(none.out);
  EXPECT_EQ(j["chat_template"]["has_template"], false);
  EXPECT_EQ(j["chat_template"]["family"], "none");

  CliRun phi3 = run_cli("inspect --model '" + testing::testdata("llama.cpp-vocab/ggml-vocab-phi-3.gguf") + "'");
  ASSERT_EQ(phi3.exit_code, 0) << phi3.err;
  EXPECT_NE(phi3.out.find("chat template: phi3 (from the file)"), std::string::npos) << phi3.out;
}

}  // namespace
}  // namespace inferscope
