#include "tests/support/scratch_dir.h"

#include <unistd.h>

#include <cstdio>
#include <system_error>

#include <gtest/gtest.h>

namespace inferscope::testing {

namespace {

namespace fs = std::filesystem;

// The running test's folder name ("Suite.Name", '/' of parameterized names as '_'), or
// "process" outside a test.
std::string owner_folder() {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  if (!test) return "process";
  std::string name = std::string(test->test_suite_name()) + "." + test->name();
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  return name;
}

void remove_or_report(const fs::path& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ec) std::fprintf(stderr, "[scratch] could not remove %s: %s\n", dir.c_str(), ec.message().c_str());
}

class ScratchCleanup : public ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo&) override { remove_or_report(scratch_root() / owner_folder()); }
};

}  // namespace

fs::path scratch_root() { return fs::temp_directory_path() / ("inferscope-test-" + std::to_string(::getpid())); }

fs::path scratch_dir(const std::string& name) {
  const fs::path dir = scratch_root() / owner_folder() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

int run_all_tests_with_scratch_cleanup() {
  ::testing::UnitTest::GetInstance()->listeners().Append(new ScratchCleanup);
  const int result = RUN_ALL_TESTS();
  remove_or_report(scratch_root());
  return result;
}

}  // namespace inferscope::testing
