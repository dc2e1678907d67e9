// main() of the engine's test programs: GoogleTest with the scratch-space cleanup
// (scratch_dir.h). test_ui has its own main, which installs the same cleanup.
#include <gtest/gtest.h>

#include "tests/support/scratch_dir.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return inferscope::testing::run_all_tests_with_scratch_cleanup();
}
