#include "tests/support/testdata.h"

#include <unistd.h>

namespace inferscope::testing {

std::filesystem::path testdata_dir() { return std::filesystem::path(INFERSCOPE_TESTDATA_DIR); }

std::filesystem::path scratch_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("inferscope-test-" + std::to_string(::getpid())) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace inferscope::testing
