#include "tests/support/testdata.h"

namespace inferscope::testing {

std::filesystem::path testdata_dir() { return std::filesystem::path(INFERSCOPE_TESTDATA_DIR); }

}  // namespace inferscope::testing
