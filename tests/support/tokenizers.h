// Loads the tokenizer of a GGUF file from the shared test data (nullptr + test failure on error).
#pragma once

#include <memory>
#include <string>

#include "engine/tokenizer/tokenizer.h"

namespace inferscope::testing {

std::shared_ptr<const Tokenizer> load_tokenizer(const std::string& relative);

}  // namespace inferscope::testing
