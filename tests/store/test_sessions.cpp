// Sessions: round trips, newest-first order, rename, delete with undo, purge (with messages).
#include <gtest/gtest.h>

#include "tests/store/store_test_support.h"

namespace inferscope::store {
namespace {

using testing::scratch_file;
using testing::test_options;

class SessionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<Store> opened = Store::open(scratch_file(::testing::UnitTest::GetInstance()->current_test_info()->name()),
                                       test_options());
    ASSERT_TRUE(opened) << opened.message();
    store_ = std::make_unique<Store>(std::move(*opened));
  }

  std::int64_t create(const std::string& title) {
    Result<SessionRecord> session = store_->sessions().create({title, "be brief", "/models/tiny.gguf"});
    EXPECT_TRUE(session) << session.message();
    return session ? session->id : -1;
  }

  std::vector<std::string> listed_titles() {
    Result<std::vector<SessionRecord>> sessions = store_->sessions().list();
    EXPECT_TRUE(sessions) << sessions.message();
    std::vector<std::string> titles;
    if (sessions) {
      for (const SessionRecord& session : *sessions) titles.push_back(session.title);
    }
    return titles;
  }

  std::unique_ptr<Store> store_;
};

TEST_F(SessionsTest, CreateThenGetRoundTrips) {
  const std::int64_t id = create("Trip planning");
  Result<SessionRecord> session = store_->sessions().get(id);
  ASSERT_TRUE(session) << session.message();
  EXPECT_EQ(session->title, "Trip planning");
  EXPECT_EQ(session->system_prompt, "be brief");
  EXPECT_EQ(session->model_path, "/models/tiny.gguf");
  EXPECT_EQ(session->created_at, session->updated_at);
  EXPECT_FALSE(session->deleted_at.has_value());
}

TEST_F(SessionsTest, ListIsNewestFirstAndFollowsActivity) {
  const std::int64_t first = create("first");
  create("second");
  create("third");
  EXPECT_EQ(listed_titles(), (std::vector<std::string>{"third", "second", "first"}));
  ASSERT_TRUE(store_->messages().append(first, {MessageRole::user, "hi", {}}));
  EXPECT_EQ(listed_titles(), (std::vector<std::string>{"first", "third", "second"}));
}

TEST_F(SessionsTest, SetSystemPromptIsStored) {
  const std::int64_t id = create("chat");
  ASSERT_TRUE(store_->sessions().set_system_prompt(id, "answer in French"));
  Result<SessionRecord> session = store_->sessions().get(id);
  ASSERT_TRUE(session) << session.message();
  EXPECT_EQ(session->system_prompt, "answer in French");
  EXPECT_FALSE(store_->sessions().set_system_prompt(id + 100, "nobody"));
}

TEST_F(SessionsTest, RenameChangesTitleAndMovesToTop) {
  const std::int64_t id = create("old");
  create("other");
  ASSERT_TRUE(store_->sessions().rename(id, "new"));
  EXPECT_EQ(listed_titles(), (std::vector<std::string>{"new", "other"}));
  Status missing = store_->sessions().rename(999, "x");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.message().find("no session with id 999"), std::string::npos) << missing.message();
}

TEST_F(SessionsTest, SoftDeleteHidesAndUndoRestores) {
  const std::int64_t id = create("oops");
  create("keep");
  ASSERT_TRUE(store_->sessions().soft_delete(id));
  EXPECT_EQ(listed_titles(), (std::vector<std::string>{"keep"}));
  Result<SessionRecord> deleted = store_->sessions().get(id);
  ASSERT_TRUE(deleted) << deleted.message();
  EXPECT_TRUE(deleted->deleted_at.has_value());
  EXPECT_FALSE(store_->sessions().soft_delete(id)) << "deleting twice is an error";

  ASSERT_TRUE(store_->sessions().undo_delete(id));
  EXPECT_EQ(listed_titles(), (std::vector<std::string>{"keep", "oops"}));
  EXPECT_FALSE(store_->sessions().undo_delete(id)) << "nothing left to undo";
}

TEST_F(SessionsTest, PurgeRemovesDeletedSessionsWithTheirMessages) {
  const std::int64_t gone = create("gone");
  const std::int64_t kept = create("kept");
  ASSERT_TRUE(store_->messages().append(gone, {MessageRole::user, "bye", {}}));
  ASSERT_TRUE(store_->messages().append(kept, {MessageRole::user, "stay", {}}));
  ASSERT_TRUE(store_->sessions().soft_delete(gone));

  Result<int> purged = store_->sessions().purge_deleted();
  ASSERT_TRUE(purged) << purged.message();
  EXPECT_EQ(*purged, 1);
  EXPECT_FALSE(store_->sessions().get(gone));
  Result<std::vector<MessageRecord>> orphans = store_->messages().list(gone);
  ASSERT_TRUE(orphans) << orphans.message();
  EXPECT_TRUE(orphans->empty());
  Result<std::vector<MessageRecord>> messages = store_->messages().list(kept);
  ASSERT_TRUE(messages) << messages.message();
  EXPECT_EQ(messages->size(), 1u);
  EXPECT_FALSE(store_->sessions().undo_delete(gone));
}

TEST_F(SessionsTest, UnicodeAndEmbeddedNulSurvive) {
  const std::string title = std::string("caf\xC3\xA9 \xF0\x9F\x98\x80 ") + std::string(1, '\0') + "end";
  Result<SessionRecord> created = store_->sessions().create({title, "", ""});
  ASSERT_TRUE(created) << created.message();
  Result<SessionRecord> session = store_->sessions().get(created->id);
  ASSERT_TRUE(session) << session.message();
  EXPECT_EQ(session->title, title);
}

}  // namespace
}  // namespace inferscope::store
