// Scratch space for tests. Every test writes under a folder of its own, which a GoogleTest
// listener removes when the test ends, passed or failed; what is made outside a test (a
// suite's SetUp, a main) is removed when the process ends. All of it lives in
// $TMPDIR/inferscope-test-<pid>/. CTest gives every test a TMPDIR in the build tree, and its
// last test (scratch.NothingLeftBehind) fails when an inferscope-test-* folder outlived its
// process (a test that crashed, or a program that made one itself).
#pragma once

#include <filesystem>
#include <string>

namespace inferscope::testing {

// A fresh, empty writable folder `name` in the running test's scratch space.
std::filesystem::path scratch_dir(const std::string& name);

// The folder of this process's scratch space ($TMPDIR/inferscope-test-<pid>).
std::filesystem::path scratch_root();

// RUN_ALL_TESTS with the cleanup: each test's scratch folder is removed as the test ends, the
// whole scratch root when the run ends (also when it only lists the tests, as CTest's test
// discovery does). Every test main returns it.
int run_all_tests_with_scratch_cleanup();

}  // namespace inferscope::testing
