// The false-hit guard on a table of prompt pairs: paraphrases it must let through and meaning
// flips it must stop, each with the rule that should fire.
#include <gtest/gtest.h>

#include <string>

#include "engine/semantic/false_hit_guard.h"
#include "engine/semantic/prompt_words.h"

namespace inferscope::semantic {
namespace {

struct PromptPair {
  const char* cached;
  const char* fresh;
};

const PromptPair kParaphrases[] = {
    {"How do I enable dark mode?", "how can I turn on dark mode"},
    {"How do I enable dark mode?", "how do i enable dark mode"},
    {"What is the capital of France?", "What's France's capital?"},
    {"How do I reverse a list in Python?", "What's the best way to reverse a list in Python?"},
    {"Can you explain how photosynthesis works?", "Explain photosynthesis to me"},
    {"How do I delete a file in Linux?", "How can I remove a file on Linux?"},
    {"What's the difference between a list and a tuple?", "How does a list differ from a tuple?"},
    {"Can you tell me a joke about cats?", "tell me a cat joke"},
    {"How many legs does a spider have?", "How many legs do spiders have?"},
    {"I can't log in to my account", "I cannot log into my account"},
    {"I can’t log in to my account", "I can't log in to my account"},
    {"Give me three examples of prime numbers", "give me 3 examples of prime numbers"},
    {"How do I install numpy?", "how to install numpy"},
    {"What is the current time in Tokyo?", "What time is it in Tokyo?"},
    {"Please summarize this article quickly", "summarize this article"},
    {"How do I use Git to undo a commit?", "How can I undo a commit with git?"},
};

struct Flip {
  const char* cached;
  const char* fresh;
  const char* reason_start;  // the rule that must fire
};

const Flip kFlips[] = {
    {"How do I enable dark mode?", "How do I disable dark mode?", "opposite meaning: 'enable' vs 'disable'"},
    {"How do I turn on dark mode?", "How do I turn off dark mode?", "opposite meaning"},
    {"How do I enable dark mode?", "how can I switch off dark mode", "opposite meaning"},
    {"How do I enable dark mode?", "How do I enable light mode?", "opposite meaning: 'dark' vs 'light'"},
    {"How do I add a user to a group?", "How do I remove a user from a group?", "opposite meaning"},
    {"How do I increase the font size?", "How do I decrease the font size?", "opposite meaning"},
    {"How to install Docker", "How to uninstall Docker", "opposite meaning"},
    {"How do I allow port 22 in the firewall?", "How do I block port 22 in the firewall?", "opposite meaning"},
    {"What happened before the war?", "What happened after the war?", "opposite meaning"},
    {"Set the min value of the slider", "Set the max value of the slider", "opposite meaning"},
    {"How do I start the server?", "How do I stop the server?", "opposite meaning"},
    {"Is this statement true?", "Is this statement false?", "opposite meaning"},
    {"Should I use tabs?", "Should I not use tabs?", "negation differs: none vs 'not'"},
    {"Why does my code work?", "Why doesn't my code work?", "negation differs"},
    {"Why does my code work?", "why doesnt my code work", "negation differs"},
    {"Can I eat eggs raw?", "Can I never eat eggs raw?", "negation differs"},
    {"Give me 3 examples", "Give me 4 examples", "number differs: '3' vs '4'"},
    {"Give me three examples", "Give me five examples", "number differs: '3' vs '5'"},
    {"How do I install Python 3.11?", "How do I install Python 3.12?", "number differs: '3.11' vs '3.12'"},
    {"Who won the 2018 World Cup?", "Who won the 2022 World Cup?", "number differs"},
    {"What is the capital of France?", "What is the capital of Spain?", "name differs: 'France' vs 'Spain'"},
    {"what is the capital of france", "what is the capital of spain", "content word differs: 'france' vs 'spain'"},
    {"Explain how Python's GIL works", "Explain how Ruby's GIL works", "name differs"},
    {"How do I open config.yaml?", "How do I open settings.yaml?", "name differs: 'config.yaml' vs 'settings.yaml'"},
    {"Rename my_var in main.cpp", "Rename my_var in util.cpp", "name differs"},
    {"In Excel, how do I sum a column?", "In Excel, how do I sum a row?", "content word differs"},
    {"How do I copy a file?", "How do I move a file?", "content word differs"},
};

TEST(FalseHitGuard, ParaphrasesPass) {
  const FalseHitGuard guard;
  for (const PromptPair& pair : kParaphrases) {
    const GuardVerdict verdict = guard.check(pair.cached, pair.fresh);
    EXPECT_TRUE(verdict.accepted) << pair.cached << " / " << pair.fresh << ": " << verdict.reason;
    EXPECT_TRUE(verdict.reason.empty());
    EXPECT_TRUE(guard.check(pair.fresh, pair.cached).accepted) << "not symmetric: " << pair.cached;
  }
}

TEST(FalseHitGuard, MeaningFlipsAreRejectedWithTheirReason) {
  const FalseHitGuard guard;
  for (const Flip& flip : kFlips) {
    const GuardVerdict verdict = guard.check(flip.cached, flip.fresh);
    EXPECT_FALSE(verdict.accepted) << flip.cached << " / " << flip.fresh;
    EXPECT_EQ(verdict.reason.rfind(flip.reason_start, 0), 0u)
        << flip.cached << " / " << flip.fresh << ": got \"" << verdict.reason << "\"";
    EXPECT_FALSE(guard.check(flip.fresh, flip.cached).accepted) << "not symmetric: " << flip.cached;
  }
}

TEST(FalseHitGuard, DisabledAcceptsEverything) {
  FalseHitGuard guard(false);
  EXPECT_TRUE(guard.check("How do I enable dark mode?", "How do I disable dark mode?").accepted);
  guard.set_enabled(true);
  EXPECT_FALSE(guard.check("How do I enable dark mode?", "How do I disable dark mode?").accepted);
}

TEST(PromptWords, JoinsFileNamesVersionsAndContractions) {
  const std::vector<PromptWord> words = split_prompt_words("Open src/main.cpp in C++ 3.11, don’t wait. Then go");
  std::vector<std::string> texts;
  for (const PromptWord& w : words) texts.push_back(w.text);
  EXPECT_EQ(texts, (std::vector<std::string>{"Open", "src/main.cpp", "in", "C++", "3.11", "don't", "wait", "Then", "go"}));
  EXPECT_TRUE(words[0].sentence_start);
  EXPECT_FALSE(words[1].sentence_start);
  EXPECT_TRUE(words[7].sentence_start);
}

TEST(PromptWords, SingularForms) {
  EXPECT_EQ(singular_form("cats"), "cat");
  EXPECT_EQ(singular_form("libraries"), "library");
  EXPECT_EQ(singular_form("boxes"), "box");
  EXPECT_EQ(singular_form("classes"), "class");
  EXPECT_EQ(singular_form("class"), "class");
  EXPECT_EQ(singular_form("analysis"), "analysis");
  EXPECT_EQ(singular_form("france's"), "france");
  EXPECT_EQ(singular_form("gas"), "gas");
}

}  // namespace
}  // namespace inferscope::semantic
