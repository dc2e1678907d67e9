// Where the tests find shared test data (read-only) and scratch space.
#pragma once

#include <filesystem>
#include <string>

namespace inferscope::testing {

// INFERSCOPE_TESTDATA_DIR (CMake cache variable), e.g. ../shared/testdata.
std::filesystem::path testdata_dir();
inline std::string testdata(const std::string& relative) { return (testdata_dir() / relative).string(); }
// A fresh, per-test writable directory under the system temp dir.
std::filesystem::path scratch_dir(const std::string& name);

}  // namespace inferscope::testing
