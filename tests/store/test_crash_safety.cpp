// kill -9 while writing: a child process appends messages in a loop and reports each commit
// through a pipe; the parent kills it at a random moment, then checks the database is intact
// and holds every message the child saw committed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include "tests/store/store_test_support.h"

namespace inferscope::store {
namespace {

using testing::scratch_file;
using testing::test_options;

std::string message_text(int round, std::uint64_t index) {
  return "round " + std::to_string(round) + " message " + std::to_string(index);
}

// Runs in the child; never returns.
[[noreturn]] void append_until_killed(const std::string& path, std::int64_t session, int round, int report_fd) {
  Result<Store> store = Store::open(path, test_options(std::chrono::milliseconds(5000)));
  if (!store) ::_exit(2);
  for (std::uint64_t committed = 0;; ) {
    if (!store->messages().append(session, {MessageRole::assistant, message_text(round, committed), {}})) ::_exit(3);
    ++committed;
    if (::write(report_fd, &committed, sizeof committed) != sizeof committed) ::_exit(4);
  }
}

// Reads every report left in the pipe; the last one is how many messages were committed.
std::uint64_t last_reported_count(int read_fd) {
  std::uint64_t last = 0;
  std::uint64_t report = 0;
  while (::read(read_fd, &report, sizeof report) == sizeof report) last = report;
  return last;
}

// Waits for the first report, so every round kills a child that is busy writing.
bool wait_for_first_commit(int read_fd, std::uint64_t& first) {
  return ::read(read_fd, &first, sizeof first) == sizeof first;
}

TEST(CrashSafety, KillNineLosesNoCommittedMessage) {
  const std::string path = scratch_file("kill-9");
  std::int64_t session = 0;
  {
    Result<Store> store = Store::open(path, test_options());
    ASSERT_TRUE(store) << store.message();
    Result<SessionRecord> created = store->sessions().create({"crash test", "", ""});
    ASSERT_TRUE(created) << created.message();
    session = created->id;
  }
  std::mt19937 random(20261129);
  std::uniform_int_distribution<int> kill_after_ms(5, 120);
  constexpr int kRounds = 5;
  for (int round = 0; round < kRounds; ++round) {
    int pipe_fds[2];
    ASSERT_EQ(::pipe(pipe_fds), 0) << std::strerror(errno);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0) << std::strerror(errno);
    if (child == 0) {
      ::close(pipe_fds[0]);
      append_until_killed(path, session, round, pipe_fds[1]);
    }
    ::close(pipe_fds[1]);
    std::uint64_t first = 0;
    const bool child_wrote = wait_for_first_commit(pipe_fds[0], first);
    std::this_thread::sleep_for(std::chrono::milliseconds(kill_after_ms(random)));
    ::kill(child, SIGKILL);
    int wait_status = 0;
    ASSERT_EQ(::waitpid(child, &wait_status, 0), child);
    ASSERT_TRUE(child_wrote) << "child exited early, status " << wait_status;
    EXPECT_TRUE(WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGKILL) << "status " << wait_status;
    const std::uint64_t committed = std::max(first, last_reported_count(pipe_fds[0]));
    ::close(pipe_fds[0]);

    Result<Store> store = Store::open(path, test_options());
    ASSERT_TRUE(store) << "round " << round << ": " << store.message();
    Status integrity = store->check_integrity();
    ASSERT_TRUE(integrity) << "round " << round << ": " << integrity.message();
    Result<std::vector<MessageRecord>> messages = store->messages().list(session);
    ASSERT_TRUE(messages) << messages.message();
    std::vector<std::string> contents;
    for (const MessageRecord& message : *messages) contents.push_back(message.content);
    for (std::uint64_t i = 0; i < committed; ++i) {
      ASSERT_NE(std::find(contents.begin(), contents.end(), message_text(round, i)), contents.end())
          << "round " << round << ": committed message " << i << " of " << committed << " is missing";
    }
    RecordProperty("round_" + std::to_string(round) + "_committed", static_cast<int>(committed));
  }
}

}  // namespace
}  // namespace inferscope::store
