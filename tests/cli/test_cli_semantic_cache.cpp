// The semantic cache from the CLI, with the real binary and a real SQLite file: generate
// --semantic-cache stores a reply and serves it to the same question (similarity 1), refuses
// a question whose number differs (the guard), keeps scopes apart, and keeps generating when
// the database is damaged; `cache stats|list|clear|audit` read and change the same file.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/support/cli_runner.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"

namespace inferscope::testing {
namespace {

using nlohmann::json;

std::string generate_args(const std::string& db, const std::string& prompt, const std::string& extra = "") {
  return "generate --semantic-cache --json --threads 2 --max-tokens 8 --seed 7 --database " + quoted(db) +
         " --embedding-model " + quoted(testdata("derived/tiny-random-bert-bge.gguf")) + " --prompt " +
         quoted(prompt) + " " + extra;
}

json generate(const std::string& db, const std::string& prompt, const std::string& extra = "") {
  CliRun r = run_cli(generate_args(db, prompt, extra));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? json::parse(r.out) : json::object();
}

TEST(CliSemanticCache, ServesTheSameQuestionAndGuardsAChangedNumber) {
  const std::string db = (scratch_dir("cli-semantic") / "cache.sqlite").string();
  const json first = generate(db, "How many legs does a cat have?");
  ASSERT_FALSE(first["semantic_cache"]["hit"].get<bool>());
  const json again = generate(db, "How many legs does a cat have?");
  ASSERT_TRUE(again["semantic_cache"]["hit"].get<bool>()) << again.dump();
  EXPECT_NEAR(again["semantic_cache"]["similarity"].get<double>(), 1.0, 1e-5);
  EXPECT_EQ(again["semantic_cache"]["matched_prompt"], "How many legs does a cat have?");
  EXPECT_EQ(again["text"], first["text"]);
  EXPECT_EQ(again["stop_reason"], "semantic_cache");

  const json three = generate(db, "How many legs do 3 cats have?");
  EXPECT_FALSE(three["semantic_cache"]["hit"].get<bool>()) << three.dump();
  if (three["semantic_cache"].contains("guard_rejected")) {
    EXPECT_NE(three["semantic_cache"]["guard_rejected"]["reason"].get<std::string>().find("number"), std::string::npos);
  }
  // Another temperature is another scope: no hit for the very same question.
  const json hotter = generate(db, "How many legs does a cat have?", "--temperature 1.3");
  EXPECT_FALSE(hotter["semantic_cache"]["hit"].get<bool>());

  CliRun stats = run_cli("cache stats --json --database " + quoted(db));
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  const json s = json::parse(stats.out);
  EXPECT_EQ(s["entries"], 3);
  EXPECT_EQ(s["hits"], 1);
  EXPECT_EQ(s["scopes"], 2);
  CliRun list = run_cli("cache list --json --search legs --database " + quoted(db));
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(json::parse(list.out).size(), 3u);
  ASSERT_EQ(run_cli("cache clear --database " + quoted(db)).exit_code, 0);
  EXPECT_EQ(json::parse(run_cli("cache stats --json --database " + quoted(db)).out)["entries"], 0);
}

TEST(CliSemanticCache, ADamagedDatabaseLeavesTheCacheInMemoryAndGenerationGoesOn) {
  const std::string db = (scratch_dir("cli-semantic-damaged") / "cache.sqlite").string();
  std::ofstream(db, std::ios::binary) << std::string(8192, 'x');
  CliRun r = run_cli(generate_args(db, "Hello there"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("memory only"), std::string::npos) << r.err;
  EXPECT_FALSE(json::parse(r.out)["text"].get<std::string>().empty());
  std::ifstream in(db, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), std::string(8192, 'x'));  // untouched
}

TEST(CliSemanticCache, AuditCountsHitsOnLabelledPairs) {
  const std::string pairs = (scratch_dir("cli-audit") / "pairs.tsv").string();
  std::ofstream(pairs) << "# labelled pairs\n"
                       << "How do I enable dark mode?\tHow do I enable dark mode?\tsame\n"
                       << "How do I enable dark mode?\tHow do I disable dark mode?\tdifferent\n";
  CliRun r = run_cli("cache audit --json --threads 2 --pairs " + quoted(pairs) + " --embedding-model " +
                     quoted(testdata("derived/tiny-random-bert-bge.gguf")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json a = json::parse(r.out);
  EXPECT_EQ(a["pairs"], 2);
  EXPECT_EQ(a["true_hits"], 1);
  EXPECT_EQ(a["false_hits"], 0);  // the guard stops enable/disable whatever the similarity
  CliRun bad = run_cli("cache audit --pairs /nonexistent.tsv");
  EXPECT_EQ(bad.exit_code, 1);
}

}  // namespace
}  // namespace inferscope::testing
