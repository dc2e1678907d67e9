// Session search over message content: words, prefixes, case and accents, deleted sessions,
// index kept in step with regenerate and purge, typed text never parsed as FTS syntax.
#include <gtest/gtest.h>

#include "tests/store/store_test_support.h"

namespace inferscope::store {
namespace {

using testing::scratch_file;
using testing::test_options;

class SessionSearchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<Store> opened = Store::open(scratch_file(::testing::UnitTest::GetInstance()->current_test_info()->name()),
                                       test_options());
    ASSERT_TRUE(opened) << opened.message();
    store_ = std::make_unique<Store>(std::move(*opened));
    cooking_ = session_with({"How long do I boil an egg?", "About nine minutes for a hard-boiled egg."});
    travel_ = session_with({"Best time to visit Kyoto?", "Autumn, for the maple leaves. Café culture too."});
    code_ = session_with({"What does \"NEAR\" mean in FTS5?", "It matches terms close together, e.g. a NEAR b."});
  }

  std::int64_t session_with(const std::vector<std::string>& contents) {
    Result<SessionRecord> session = store_->sessions().create({"s", "", ""});
    EXPECT_TRUE(session) << session.message();
    MessageRole role = MessageRole::user;
    for (const std::string& content : contents) {
      EXPECT_TRUE(store_->messages().append(session->id, {role, content, {}}));
      role = role == MessageRole::user ? MessageRole::assistant : MessageRole::user;
    }
    return session->id;
  }

  std::vector<std::int64_t> found(const std::string& typed) {
    Result<std::vector<std::int64_t>> ids = store_->search().find(typed);
    EXPECT_TRUE(ids) << typed << ": " << ids.message();
    return ids ? *ids : std::vector<std::int64_t>{};
  }

  using Ids = std::vector<std::int64_t>;
  std::unique_ptr<Store> store_;
  std::int64_t cooking_ = 0, travel_ = 0, code_ = 0;
};

TEST_F(SessionSearchTest, FindsWordsPrefixesAcrossCaseAndAccents) {
  EXPECT_EQ(found("egg"), Ids{cooking_});
  EXPECT_EQ(found("KYOTO"), Ids{travel_});
  EXPECT_EQ(found("map"), Ids{travel_}) << "the last word matches as a prefix";
  EXPECT_EQ(found("cafe"), Ids{travel_}) << "accents are folded";
  EXPECT_EQ(found("boil nine"), Ids{cooking_}) << "every word must match";
  EXPECT_EQ(found("boil kyoto"), Ids{});
  EXPECT_EQ(found("zebra"), Ids{});
}

TEST_F(SessionSearchTest, ResultsAreNewestFirst) {
  const std::int64_t later = session_with({"another egg question"});
  EXPECT_EQ(found("egg"), (Ids{later, cooking_}));
}

TEST_F(SessionSearchTest, TypedSyntaxIsSearchedNotInterpreted) {
  EXPECT_EQ(found("\"NEAR\""), Ids{code_});
  EXPECT_EQ(found("a NEAR b"), Ids{code_});
  EXPECT_EQ(found("content:egg"), Ids{}) << "column filters are not honoured";
  EXPECT_EQ(found("egg OR kyoto"), Ids{}) << "OR is a word here";
  EXPECT_EQ(found("*"), Ids{});
  EXPECT_EQ(found("(\"unbalanced"), Ids{});
  EXPECT_EQ(found(""), Ids{});
  EXPECT_EQ(found("   \t "), Ids{});
}

TEST_F(SessionSearchTest, DeletedSessionsAreNotFoundUntilRestored) {
  ASSERT_TRUE(store_->sessions().soft_delete(cooking_));
  EXPECT_EQ(found("egg"), Ids{});
  ASSERT_TRUE(store_->sessions().undo_delete(cooking_));
  EXPECT_EQ(found("egg"), Ids{cooking_});
}

TEST_F(SessionSearchTest, IndexFollowsRegenerateAndPurge) {
  ASSERT_TRUE(store_->messages().replace_last_assistant(cooking_, "Seven minutes for a jammy yolk.", {}));
  EXPECT_EQ(found("jammy"), Ids{cooking_});
  EXPECT_EQ(found("hard boiled"), Ids{});
  ASSERT_TRUE(store_->sessions().soft_delete(travel_));
  ASSERT_TRUE(store_->sessions().purge_deleted());
  EXPECT_EQ(found("kyoto"), Ids{});
  EXPECT_TRUE(store_->check_integrity());
}

TEST(FtsQuery, QuotesEveryWordAsAPrefixTerm) {
  EXPECT_EQ(fts_query_from_typed_text("  hello  wor"), "\"hello\"* \"wor\"*");
  EXPECT_EQ(fts_query_from_typed_text("say \"hi\""), "\"say\"* \"\"\"hi\"\"\"*");
  EXPECT_EQ(fts_query_from_typed_text(""), "");
}

}  // namespace
}  // namespace inferscope::store
