// The cache audit with a fake embedding model (bag of words over a fixed vocabulary): counts,
// precision and recall, the false hits it lists, and the pairs file format.
#include <gtest/gtest.h>

#include <fstream>

#include "engine/semantic/cache_audit.h"
#include "engine/semantic/prompt_words.h"
#include "tests/support/scratch_dir.h"

namespace inferscope::semantic {
namespace {

// One dimension per distinct word (lowercased, plural s removed), counts as values: prompts
// with the same words embed identically; "enable" and "disable" differ in one of many words.
class BagOfWords {
 public:
  Result<std::vector<float>> operator()(const std::string& prompt) {
    if (prompt == "FAIL") return Status::error("model not loaded");
    std::vector<float> v(256, 0.0f);
    for (const PromptWord& w : split_prompt_words(prompt)) v[dimension_of(singular_form(w.lower))] += 1.0f;
    return v;
  }

 private:
  std::size_t dimension_of(const std::string& word) {
    auto found = dims_.find(word);
    if (found != dims_.end()) return found->second;
    return dims_.emplace(word, dims_.size() % 256).first->second;
  }
  std::map<std::string, std::size_t> dims_;
};

constexpr const char* kPairs =
    "# prompt A\tprompt B\tlabel\n"
    "how do I reverse a list in python\thow do I reverse a list in python please\tsame\n"
    "what is the capital of france\twhat is the capital of france\tsame\n"
    "show me how to sort a big list of numbers quickly in python\tsort a list\tsame\n"
    "\n"
    "how do I enable the dark mode in the settings app on my phone\thow do I disable the dark mode in the settings app on my phone\tdifferent\n"
    "what is the capital of france\twhat is the capital of spain\tdifferent\r\n";

TEST(CacheAudit, CountsHitsWithAndWithoutTheGuard) {
  Result<std::vector<AuditPair>> pairs = parse_audit_pairs(kPairs, "pairs.tsv");
  ASSERT_TRUE(pairs) << pairs.message();
  ASSERT_EQ(pairs->size(), 5u);
  EXPECT_EQ((*pairs)[3].line, 6);

  BagOfWords model;
  const EmbedFunction embed = [&](const std::string& p) { return model(p); };
  // "please" added to 8 words: cosine 8/sqrt(8*9) = 0.943; enable/disable among 14 words ("the"
  // twice): 15/16 = 0.9375; france/spain among 6: 5/6 = 0.83; the sort pair: 3/sqrt(39) = 0.48.
  Result<AuditReport> unguarded = run_cache_audit(*pairs, embed, AuditSettings{0.90f, false});
  ASSERT_TRUE(unguarded) << unguarded.message();
  EXPECT_EQ(unguarded->true_hits, 2);
  EXPECT_EQ(unguarded->missed, 1);
  EXPECT_EQ(unguarded->false_hits, 1);
  EXPECT_EQ(unguarded->correct_misses, 1);
  EXPECT_DOUBLE_EQ(unguarded->precision(), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(unguarded->recall(), 2.0 / 3.0);
  ASSERT_EQ(unguarded->false_hit_cases.size(), 1u);
  EXPECT_EQ(unguarded->false_hit_cases[0].pair.line, 6);
  EXPECT_NEAR(unguarded->false_hit_cases[0].similarity, 15.0 / 16.0, 1e-6);

  Result<AuditReport> guarded = run_cache_audit(*pairs, embed, AuditSettings{0.90f, true});
  ASSERT_TRUE(guarded) << guarded.message();
  EXPECT_EQ(guarded->false_hits, 0);
  EXPECT_EQ(guarded->true_hits, 2);
  EXPECT_DOUBLE_EQ(guarded->precision(), 1.0);
  EXPECT_EQ(guarded->guard_rejections, 1);
  ASSERT_EQ(guarded->guard_saves.size(), 1u);
  EXPECT_EQ(guarded->guard_saves[0].guard_reason, "opposite meaning: 'enable' vs 'disable'");
  EXPECT_TRUE(guarded->guard_losses.empty());

  Result<AuditReport> strict = run_cache_audit(*pairs, embed, AuditSettings{0.99f, true});
  ASSERT_TRUE(strict);
  EXPECT_EQ(strict->true_hits, 1);
  EXPECT_DOUBLE_EQ(strict->recall(), 1.0 / 3.0);
}

TEST(CacheAudit, MalformedLinesAndEmbeddingFailuresAreErrors) {
  Result<std::vector<AuditPair>> two_fields = parse_audit_pairs("a\tb\n", "p.tsv");
  ASSERT_FALSE(two_fields);
  EXPECT_NE(two_fields.message().find("p.tsv:1: expected 3 tab-separated fields"), std::string::npos);
  Result<std::vector<AuditPair>> bad_label = parse_audit_pairs("\n\na\tb\tsimilar\n", "p.tsv");
  ASSERT_FALSE(bad_label);
  EXPECT_NE(bad_label.message().find("p.tsv:3: third field"), std::string::npos) << bad_label.message();
  EXPECT_FALSE(parse_audit_pairs("\tb\tsame\n", "p.tsv"));

  BagOfWords model;
  Result<AuditReport> failed = run_cache_audit({AuditPair{"hello", "FAIL", true, 4}},
                                               [&](const std::string& p) { return model(p); }, AuditSettings{});
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.message().find("line 4"), std::string::npos) << failed.message();
  EXPECT_NE(failed.message().find("model not loaded"), std::string::npos) << failed.message();
}

TEST(CacheAudit, ReadsThePairsFile) {
  const std::string path = (inferscope::testing::scratch_dir("audit") / "pairs.tsv").string();
  std::ofstream(path) << kPairs;
  Result<std::vector<AuditPair>> pairs = read_audit_pairs(path);
  ASSERT_TRUE(pairs) << pairs.message();
  EXPECT_EQ(pairs->size(), 5u);
  EXPECT_FALSE(read_audit_pairs(path + ".missing"));
}

}  // namespace
}  // namespace inferscope::semantic
