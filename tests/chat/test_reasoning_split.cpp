// The reasoning splitter: <think> ... </think> apart from the answer however the text is cut
// into pieces, a generation prompt that opened the reasoning, and replies without any; gpt-oss's
// harmony channels by their control tokens.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/chat/reasoning_split.h"

namespace inferscope {
namespace {

struct Split {
  std::string reasoning, answer;
};

// Feeds `pieces` one by one, then flushes; collects what went to each side.
Split run(ReasoningFormat format, const std::string& prompt, const std::vector<std::string>& pieces) {
  ReasoningSplitter s(format, prompt);
  Split out;
  auto take = [&](const std::vector<ReasoningSegment>& segments) {
    for (const ReasoningSegment& seg : segments) (seg.reasoning ? out.reasoning : out.answer) += seg.text;
  };
  for (const std::string& p : pieces) take(s.push(p));
  take(s.flush());
  return out;
}

// Every way of cutting `text` into two pieces gives the same split.
void expect_any_cut(const std::string& prompt, const std::string& text, const Split& expected,
                    ReasoningFormat format = ReasoningFormat::ThinkTags) {
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    const Split got = run(format, prompt, {text.substr(0, cut), text.substr(cut)});
    EXPECT_EQ(got.reasoning, expected.reasoning) << "cut at " << cut;
    EXPECT_EQ(got.answer, expected.answer) << "cut at " << cut;
  }
}

TEST(ReasoningSplit, FormatFromTheTemplate) {
  EXPECT_EQ(reasoning_format_of("{{ '<think>\\n' }}{% if enable_thinking %}"), ReasoningFormat::ThinkTags);
  EXPECT_EQ(reasoning_format_of("{{- '<|start|>assistant<|channel|>analysis<|message|>' }}"), ReasoningFormat::Harmony);
  EXPECT_EQ(reasoning_format_of("<|im_start|>{{ message.content }}"), ReasoningFormat::None);
}

TEST(ReasoningSplit, ThinkingThenAnswerAnyCut) {
  expect_any_cut("<|im_start|>assistant\n", "<think>\nLet me add: 2 + 2.\n</think>\n\nIt is 4.",
                 {"\nLet me add: 2 + 2.\n", "It is 4."});
}

TEST(ReasoningSplit, TokenByTokenPieces) {
  const Split got = run(ReasoningFormat::ThinkTags, "", {"<th", "ink", ">", "hmm", "</", "think", ">", "\n", "\n", "Yes"});
  EXPECT_EQ(got.reasoning, "hmm");
  EXPECT_EQ(got.answer, "Yes");
}

TEST(ReasoningSplit, APromptThatOpenedTheReasoningStartsInside) {
  expect_any_cut("<|Assistant|><think>\n", "Thinking.</think>Answer.", {"Thinking.", "Answer."});
}

TEST(ReasoningSplit, NoReasoningIsAllAnswer) {
  expect_any_cut("", "Hello <think> is just text here", {"", "Hello <think> is just text here"});
  const Split plain = run(ReasoningFormat::None, "", {"<think>x</think>y"});
  EXPECT_EQ(plain.answer, "<think>x</think>y");
  EXPECT_EQ(plain.reasoning, "");
}

TEST(ReasoningSplit, AnUnfinishedReasoningStaysReasoning) {
  const Split got = run(ReasoningFormat::ThinkTags, "", {"<think>still going </th"});
  EXPECT_EQ(got.reasoning, "still going </th");
  EXPECT_EQ(got.answer, "");
}

TEST(ReasoningSplit, ALaterThinkTagInTheAnswerIsText) {
  expect_any_cut("", "<think>a</think>b <think>c</think>", {"a", "b <think>c</think>"});
}

// A harmony reply as the model writes it, token by token (its markers print as text).
Split run_harmony(const std::string& prompt, const std::vector<std::string>& tokens) {
  return run(ReasoningFormat::Harmony, prompt, tokens);
}

// gpt-oss after "<|start|>assistant": the analysis message is the reasoning, the final one the
// answer; the headers (channel names, the second <|start|>assistant) are neither.
TEST(ReasoningSplit, HarmonyAnalysisThenFinal) {
  const Split got = run_harmony("<|start|>user<|message|>2+2?<|end|><|start|>assistant",
                                {"<|channel|>", "analysis", "<|message|>", "User asks", " a sum.", "<|end|>", "<|start|>",
                                 "assistant", "<|channel|>", "final", "<|message|>", "It is", " 4."});
  EXPECT_EQ(got.reasoning, "User asks a sum.");
  EXPECT_EQ(got.answer, "It is 4.");
  // Cut into two pieces anywhere (a marker split across them too).
  expect_any_cut("<|start|>assistant",
                 "<|channel|>analysis<|message|>Sum <|it|>.<|end|><|start|>assistant<|channel|>final<|message|>4",
                 {"Sum <|it|>.", "4"}, ReasoningFormat::Harmony);
}

// A generation prompt that opened the final channel; a reply that goes straight to it; a model
// that writes no marker at all (its text is the answer).
TEST(ReasoningSplit, HarmonyPromptsAndRepliesWithoutAnalysis) {
  const Split opened = run_harmony("<|start|>assistant<|channel|>final<|message|>", {"Hi", "!", "<|return|>"});
  EXPECT_EQ(opened.answer, "Hi!");
  EXPECT_EQ(opened.reasoning, "");
  const Split direct = run_harmony("<|start|>assistant", {"<|channel|>", "final", "<|message|>", "Hello"});
  EXPECT_EQ(direct.answer, "Hello");
  const Split plain = run_harmony("<|start|>assistant", {"just", " text"});
  EXPECT_EQ(plain.answer, "just text");
  EXPECT_EQ(plain.reasoning, "");
}

// A tool call's header names its recipient before the channel; its text is the answer side.
TEST(ReasoningSplit, HarmonyCommentaryIsNotReasoning) {
  const Split got = run_harmony("<|start|>assistant", {"<|channel|>", "analysis", "<|message|>", "Need weather.", "<|end|>",
                                                      "<|start|>", "assistant", " to=functions.get_weather", "<|channel|>",
                                                      "commentary json", "<|message|>", "{\"city\":\"Oslo\"}", "<|call|>"});
  EXPECT_EQ(got.reasoning, "Need weather.");
  EXPECT_EQ(got.answer, "{\"city\":\"Oslo\"}");
}

}  // namespace
}  // namespace inferscope
