#include "tests/support/testdata.h"

#include <fstream>

#include <nlohmann/json.hpp>

namespace inferscope::testing {

std::filesystem::path testdata_dir() { return std::filesystem::path(INFERSCOPE_TESTDATA_DIR); }

std::vector<int32_t> quant_reference_tokens() {
  std::ifstream in(testdata("quant/base-f32.gguf.json"));
  const auto ref = nlohmann::json::parse(in)["reference"];
  auto tokens = ref["prompt_ids"].get<std::vector<int32_t>>();
  const auto greedy = ref["greedy_ids"].get<std::vector<int32_t>>();
  tokens.insert(tokens.end(), greedy.begin(), greedy.end());
  return tokens;
}

}  // namespace inferscope::testing
