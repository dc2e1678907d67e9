// The tests' scratch cleanup (tests/support/scratch_dir.h): a test's folder is gone when the
// test ends, passed or failed, and the process's scratch root when the program ends. The test
// runs its own binary as a child for the helper test below and looks at what the child left.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/scratch_dir.h"

namespace inferscope {
namespace {

namespace fs = std::filesystem;

constexpr const char* kChildVariable = "INFERSCOPE_SCRATCH_CHILD";

// In the child only: writes a file in its scratch space, prints where, and passes or fails.
TEST(ScratchCleanupChild, WritesAFile) {
  const char* mode = std::getenv(kChildVariable);
  if (!mode) GTEST_SKIP() << "runs as the child of ScratchCleanup.*";
  const fs::path file = testing::scratch_dir("child") / "left.txt";
  std::ofstream(file) << "x";
  std::printf("SCRATCH_FILE=%s\nSCRATCH_ROOT=%s\n", file.c_str(), testing::scratch_root().c_str());
  std::fflush(stdout);
  if (std::string(mode) == "fail") ADD_FAILURE() << "failing on purpose";
}

struct ChildRun {
  int status = -1;
  fs::path file, root;
};

ChildRun run_child(const std::string& mode) {
  const fs::path self = fs::read_symlink("/proc/self/exe");
  const std::string command = std::string("env ") + kChildVariable + "=" + mode + " '" + self.string() +
                              "' --gtest_filter=ScratchCleanupChild.WritesAFile";
  FILE* pipe = popen(command.c_str(), "r");
  ChildRun run;
  if (!pipe) return run;
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  run.status = pclose(pipe);
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("SCRATCH_FILE=", 0) == 0) run.file = line.substr(13);
    if (line.rfind("SCRATCH_ROOT=", 0) == 0) run.root = line.substr(13);
  }
  return run;
}

// Runs the child test, passing or failing, and checks that it left neither its file nor its root.
void expect_nothing_left(const std::string& mode) {
  const ChildRun run = run_child(mode);
  EXPECT_EQ(run.status == 0, mode == "pass") << "child exit status " << run.status;
  ASSERT_FALSE(run.file.empty()) << "the child printed no path";
  EXPECT_FALSE(fs::exists(run.file)) << run.file;
  EXPECT_FALSE(fs::exists(run.root)) << run.root;
}

TEST(ScratchCleanup, APassingTestLeavesNothing) { expect_nothing_left("pass"); }

TEST(ScratchCleanup, AFailingTestLeavesNothingEither) { expect_nothing_left("fail"); }

TEST(ScratchCleanup, TheFolderIsInTheTestsOwnPlace) {
  const fs::path dir = testing::scratch_dir("mine");
  EXPECT_TRUE(fs::is_directory(dir));
  EXPECT_EQ(dir.parent_path().filename(), "ScratchCleanup.TheFolderIsInTheTestsOwnPlace");
  EXPECT_EQ(dir.parent_path().parent_path(), testing::scratch_root());
}

}  // namespace
}  // namespace inferscope
