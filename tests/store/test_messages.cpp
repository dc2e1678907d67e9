// Messages: append with stats round trips, order, regenerate (replace the last assistant
// message), edit-and-resend (keep the first messages), and refusals for missing or deleted sessions.
#include <gtest/gtest.h>

#include "tests/store/store_test_support.h"

namespace inferscope::store {
namespace {

using testing::scratch_file;
using testing::test_options;

class MessagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<Store> opened = Store::open(scratch_file(::testing::UnitTest::GetInstance()->current_test_info()->name()),
                                       test_options());
    ASSERT_TRUE(opened) << opened.message();
    store_ = std::make_unique<Store>(std::move(*opened));
    Result<SessionRecord> session = store_->sessions().create({"chat", "", ""});
    ASSERT_TRUE(session) << session.message();
    session_ = session->id;
  }

  std::vector<MessageRecord> listed() {
    Result<std::vector<MessageRecord>> messages = store_->messages().list(session_);
    EXPECT_TRUE(messages) << messages.message();
    return messages ? *messages : std::vector<MessageRecord>{};
  }

  static MessageStats generated_stats() {
    return MessageStats{42,          31.5, 120.25, std::string("end_of_turn"), std::string("tiny.gguf"), std::string("cpu"),
                        std::string("Two and two make four."), 6};
  }

  std::unique_ptr<Store> store_;
  std::int64_t session_ = 0;
};

TEST_F(MessagesTest, AppendAndListRoundTripInOrder) {
  Result<MessageRecord> question = store_->messages().append(session_, {MessageRole::user, "What is 2+2?", {}});
  ASSERT_TRUE(question) << question.message();
  Result<MessageRecord> answer = store_->messages().append(session_, {MessageRole::assistant, "4", generated_stats()});
  ASSERT_TRUE(answer) << answer.message();

  const std::vector<MessageRecord> messages = listed();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].id, question->id);
  EXPECT_EQ(messages[0].role, MessageRole::user);
  EXPECT_EQ(messages[0].content, "What is 2+2?");
  EXPECT_FALSE(messages[0].stats.tokens.has_value());
  EXPECT_FALSE(messages[0].stats.model.has_value());

  const MessageRecord& stored = messages[1];
  EXPECT_EQ(stored.id, answer->id);
  EXPECT_EQ(stored.session_id, session_);
  EXPECT_EQ(stored.role, MessageRole::assistant);
  EXPECT_EQ(stored.content, "4");
  EXPECT_EQ(stored.created_at, answer->created_at);
  EXPECT_EQ(stored.stats.tokens, 42);
  EXPECT_EQ(stored.stats.tokens_per_second, 31.5);
  EXPECT_EQ(stored.stats.ttft_ms, 120.25);
  EXPECT_EQ(stored.stats.stop_reason, "end_of_turn");
  EXPECT_EQ(stored.stats.model, "tiny.gguf");
  EXPECT_EQ(stored.stats.backend, "cpu");
  EXPECT_EQ(stored.stats.reasoning, "Two and two make four.");
  EXPECT_EQ(stored.stats.reasoning_tokens, 6);
  EXPECT_FALSE(messages[0].stats.reasoning.has_value());
}

TEST_F(MessagesTest, AppendIsCommittedBeforeReturning) {
  ASSERT_TRUE(store_->messages().append(session_, {MessageRole::user, "durable", {}}));
  // A second connection (as another process would) sees it at once.
  Result<Store> other = Store::open(store_->path(), test_options());
  ASSERT_TRUE(other) << other.message();
  Result<std::vector<MessageRecord>> messages = other->messages().list(session_);
  ASSERT_TRUE(messages) << messages.message();
  ASSERT_EQ(messages->size(), 1u);
  EXPECT_EQ(messages->front().content, "durable");
}

TEST_F(MessagesTest, RegenerateReplacesTheLastAssistantMessage) {
  ASSERT_TRUE(store_->messages().append(session_, {MessageRole::user, "Tell a joke", {}}));
  Result<MessageRecord> first = store_->messages().append(session_, {MessageRole::assistant, "meh", {}});
  ASSERT_TRUE(first) << first.message();

  Result<MessageRecord> again = store_->messages().replace_last_assistant(session_, "a better joke", generated_stats());
  ASSERT_TRUE(again) << again.message();
  EXPECT_EQ(again->id, first->id);

  const std::vector<MessageRecord> messages = listed();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[1].id, first->id);
  EXPECT_EQ(messages[1].content, "a better joke");
  EXPECT_EQ(messages[1].stats.tokens, 42);
  EXPECT_EQ(messages[1].stats.reasoning, "Two and two make four.");
}

TEST_F(MessagesTest, RegenerateNeedsAnAssistantMessageLast) {
  Status empty = store_->messages().replace_last_assistant(session_, "x", {}).status();
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.message().find("has no messages"), std::string::npos) << empty.message();

  ASSERT_TRUE(store_->messages().append(session_, {MessageRole::assistant, "old", {}}));
  ASSERT_TRUE(store_->messages().append(session_, {MessageRole::user, "new question", {}}));
  Status after_user = store_->messages().replace_last_assistant(session_, "x", {}).status();
  ASSERT_FALSE(after_user);
  EXPECT_NE(after_user.message().find("ends with a user message"), std::string::npos) << after_user.message();
  EXPECT_EQ(listed()[0].content, "old");
}

TEST_F(MessagesTest, DeletedOrMissingSessionsTakeNoMessages) {
  ASSERT_TRUE(store_->sessions().soft_delete(session_));
  Status deleted = store_->messages().append(session_, {MessageRole::user, "hello?", {}}).status();
  ASSERT_FALSE(deleted);
  EXPECT_NE(deleted.message().find("is deleted"), std::string::npos) << deleted.message();
  ASSERT_TRUE(store_->sessions().undo_delete(session_));
  EXPECT_TRUE(listed().empty());
  EXPECT_TRUE(store_->messages().append(session_, {MessageRole::user, "hello again", {}}));
}

TEST_F(MessagesTest, LargeMessageRoundTrips) {
  std::string content(3 << 20, 'x');
  for (std::size_t i = 0; i < content.size(); i += 997) content[i] = static_cast<char>('a' + i % 26);
  ASSERT_TRUE(store_->messages().append(session_, {MessageRole::assistant, content, {}}));
  ASSERT_EQ(listed().size(), 1u);
  EXPECT_EQ(listed()[0].content, content);
}

TEST_F(MessagesTest, KeepFirstRemovesTheLaterMessagesAndTheirSearchEntries) {
  for (const char* text : {"first question", "first answer", "second question", "second answer"}) {
    ASSERT_TRUE(store_->messages().append(session_, {MessageRole::user, text, {}}));
  }
  ASSERT_TRUE(store_->messages().keep_first(session_, 2));
  ASSERT_EQ(listed().size(), 2u);
  EXPECT_EQ(listed()[1].content, "first answer");
  Result<std::vector<std::int64_t>> found = store_->search().find("second");
  ASSERT_TRUE(found) << found.message();
  EXPECT_TRUE(found->empty());
  ASSERT_TRUE(store_->messages().keep_first(session_, 0));
  EXPECT_TRUE(listed().empty());
}

}  // namespace
}  // namespace inferscope::store
