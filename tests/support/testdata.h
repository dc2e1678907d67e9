// Where the tests find shared test data (read-only); scratch space is in scratch_dir.h.
#pragma once

#include <filesystem>
#include <string>

namespace inferscope::testing {

// INFERSCOPE_TESTDATA_DIR (CMake cache variable), e.g. ../shared/testdata.
std::filesystem::path testdata_dir();
inline std::string testdata(const std::string& relative) { return (testdata_dir() / relative).string(); }

}  // namespace inferscope::testing
