#include "tests/support/tokenizers.h"

#include <gtest/gtest.h>

#include "engine/gguf/gguf_file.h"
#include "tests/support/testdata.h"

namespace inferscope::testing {

std::shared_ptr<const Tokenizer> load_tokenizer(const std::string& relative) {
  auto file = gguf::File::open(testdata(relative));
  EXPECT_TRUE(file.is_ok()) << file.message();
  if (!file) return nullptr;
  auto tokenizer = Tokenizer::from_gguf(**file);
  EXPECT_TRUE(tokenizer.is_ok()) << tokenizer.message();
  return tokenizer ? *tokenizer : nullptr;
}

}  // namespace inferscope::testing
