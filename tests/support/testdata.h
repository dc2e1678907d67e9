// Where the tests find shared test data (read-only); scratch space is in scratch_dir.h.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace inferscope::testing {

// INFERSCOPE_TESTDATA_DIR (CMake cache variable), e.g. ../shared/testdata.
std::filesystem::path testdata_dir();
inline std::string testdata(const std::string& relative) { return (testdata_dir() / relative).string(); }

// quant/base-f32.gguf's reference sequence (base-f32.gguf.json): the prompt's ids followed by
// llama.cpp's greedy continuation.
std::vector<int32_t> quant_reference_tokens();

}  // namespace inferscope::testing
